import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { resolveMemoirs } from '../../memoir/discover.js';
import { confirmDuplicates, newSeenIds, verifyFile, type Problem } from '../../memoir/verify.js';
import { colors } from '../../output/color.js';
import { collector } from '../../runtime/gc.js';
import { progress } from '../../output/progress.js';
import { CHUNK_BYTES, openIndex, type MemoirIndex } from '../../store/memoir-index.js';
import { defineCommand } from '../types.js';
import { memoirOpt } from './shared.js';
import { revisionProblems } from './verify-revisions.js';

const options = z.object({ memoir: memoirOpt, json: z.boolean().default(false) });

export interface VerifyResult {
  ok: boolean;
  memoirs: number;
  entries: number;
  errors: number;
  warnings: number;
  problems: Problem[];
}

/** Append-only check against what the index saw: every recorded chunk hash, head and tail. */
function appendOnlyProblems(index: MemoirIndex, path: string): Problem[] {
  const row = index.file(path);
  if (!row || row.indexed_bytes === 0) return [];
  const out: Problem[] = [];
  const st = statSync(path, { bigint: true });
  const fd = openSync(path, 'r');
  try {
    const why = index.appendOnlyViolation(fd, row, Number(st.size), String(st.dev), String(st.ino));
    if (why) out.push({ path, line: null, offset: null, kind: 'not_append', severity: 'error', message: why, fix: `kourai memoir index --rebuild --memoir ${path}` });
    const buf = Buffer.alloc(CHUNK_BYTES);
    for (const { chunk, hash } of index.chunks(row.id)) {
      const n = readSync(fd, buf, 0, CHUNK_BYTES, chunk * CHUNK_BYTES);
      if (createHash('sha256').update(buf.subarray(0, n)).digest('hex') !== hash) {
        out.push({ path, line: null, offset: chunk * CHUNK_BYTES, kind: 'not_append', severity: 'error', message: `bytes ${chunk * CHUNK_BYTES}–${(chunk + 1) * CHUNK_BYTES} changed after they were indexed: not an append` });
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
  for (const ev of index.integrityEvents([path])) {
    out.push({ path, line: null, offset: null, kind: 'not_append', severity: 'error', message: `${ev.what} (detected ${ev.detected_at})` });
  }
  return out;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<VerifyResult> {
    const home = kouraiHome(ctx);
    const paths = resolveMemoirs(opts.memoir, home, ctx.cwd);
    const index = openIndex(home);
    const problems: Problem[] = [];
    let entries = 0;
    try {
      const seen = newSeenIds();
      const total = paths.reduce((s, p) => s + statSync(p).size, 0);
      const bar = progress(ctx.stderr, { label: 'verifying', total, unit: 'B', quiet: opts.json });
      let done = 0;
      const gc = collector();
      let ticks = 0;
      for (const p of paths) {
        problems.push(...appendOnlyProblems(index, p));
        const v = verifyFile(p, seen, (b) => {
          bar.update(done + b);
          if (++ticks % 2 === 0) gc(); // every 50k entries: keeps a 1M-entry verify well under 200 MB
        });
        done += v.bytes;
        entries += v.entries;
        problems.push(...v.problems);
      }
      problems.push(...confirmDuplicates(seen));
      bar.finish();
      problems.push(...revisionProblems(index, paths, () => {
        if (++ticks % 10 === 0) gc(); // the index update parses every new entry too
      }));
    } finally {
      index.close();
    }
    const errors = problems.filter((p) => p.severity === 'error').length;
    return { ok: errors === 0, memoirs: paths.length, entries, errors, warnings: problems.length - errors, problems };
  },
  exitCode: (r) => (r.ok ? 0 : 1),
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const lines = r.problems.map((p) => {
      const where = p.line !== null ? `${p.path}:${p.line}` : p.path;
      const tag = p.severity === 'error' ? c.red(p.kind) : c.yellow(p.kind);
      return `${where}: ${tag}: ${p.message}${p.fix ? c.dim(`  (fix: ${p.fix})`) : ''}`;
    });
    const summary = r.ok
      ? c.green(`ok: ${r.entries} entries in ${r.memoirs} memoir${r.memoirs === 1 ? '' : 's'}${r.warnings ? `, ${r.warnings} warnings` : ''}`)
      : c.red(`${r.errors} problem${r.errors === 1 ? '' : 's'} in ${r.memoirs} memoir${r.memoirs === 1 ? '' : 's'} (${r.entries} valid entries)`);
    return [...lines, summary].join('\n');
  },
});
