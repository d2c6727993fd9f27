import { statSync } from 'node:fs';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { CancelledError } from '../../errors.js';
import { resolveMemoirs } from '../../memoir/discover.js';
import { colors } from '../../output/color.js';
import { progress } from '../../output/progress.js';
import { collector } from '../../runtime/gc.js';
import { assertIndexWritable } from '../../store/index-file.js';
import { indexPath, openIndex } from '../../store/memoir-index.js';
import { defineCommand } from '../types.js';
import { memoirOpt } from './shared.js';

const options = z.object({ memoir: memoirOpt, rebuild: z.boolean().default(false), json: z.boolean().default(false) });

export interface IndexResult {
  files: { path: string; new_entries: number; new_invalid_lines: number; bytes_read: number; integrity: string | null; torn_tail_bytes: number }[];
  seconds: number;
}

/**
 * `memoir index [--rebuild]`: brings the index up to date (or rebuilds it, which acknowledges
 * changes that were not appends). It must write the index: a home that cannot be written is
 * exit 3 naming the path. Progress on stderr; Ctrl-C stops it within a batch (exit 130), with an
 * incremental run keeping what it committed and a bulk build rolled back whole.
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<IndexResult> {
    const t0 = performance.now();
    const home = kouraiHome(ctx);
    const paths = resolveMemoirs(opts.memoir, home, ctx.cwd);
    assertIndexWritable(indexPath(home));
    const index = openIndex(home, { now: ctx.now });
    const c = colors(ctx.colorLevel);
    for (const note of index.notes) ctx.stderr.write(`${c.yellow('note')}: ${note}\n`);
    try {
      const total = paths.reduce((s, p) => s + statSync(p).size, 0);
      const bar = progress(ctx.stderr, { label: opts.rebuild ? 'rebuilding the index' : 'indexing', total, unit: 'B', quiet: opts.json });
      const gc = collector();
      let ticks = 0;
      const updates = await index.build(paths, {
        now: ctx.now,
        rebuild: opts.rebuild,
        checkpoint: async (done) => {
          bar.update(done);
          if (++ticks % 10 === 0) gc(); // bounded memory on big builds
          await new Promise((r) => setImmediate(r));
          if (ctx.signal.aborted) throw new CancelledError(opts.rebuild ? 'index rebuild cancelled: the index is as it was' : 'indexing cancelled: what was indexed so far is kept');
        },
      });
      bar.finish();
      for (const u of updates) if (u.integrity && !opts.json) ctx.stderr.write(`${c.yellow('warning')}: ${u.path}: ${u.integrity}; the index was rebuilt for it (see \`kourai memoir verify\`)\n`);
      return {
        files: updates.map((u) => ({
          path: u.path,
          new_entries: u.newEntries,
          new_invalid_lines: u.newProblems,
          bytes_read: u.bytesRead,
          integrity: u.integrity ?? null,
          torn_tail_bytes: u.tornTailBytes,
        })),
        seconds: (performance.now() - t0) / 1000,
      };
    } finally {
      index.close();
    }
  },
  render(r) {
    const n = r.files.reduce((s, f) => s + f.new_entries, 0);
    return `indexed ${n} new entries from ${r.files.length} memoir${r.files.length === 1 ? '' : 's'} in ${r.seconds.toFixed(2)}s`;
  },
});
