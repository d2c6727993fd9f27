import { statSync } from 'node:fs';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { progress } from '../../output/progress.js';
import { collector } from '../../runtime/gc.js';
import { resolveMemoirs } from '../../memoir/discover.js';
import { loadEntryAt } from '../../memoir/reader.js';
import type { MemoirEntry } from '../../memoir/schema.js';
import { openIndex, type EntryRow, type FileUpdate, type MemoirIndex } from '../../store/memoir-index.js';
import { warn } from '../../output/notice.js';

export const memoirOpt = z.array(z.string()).default([]);

export interface Indexed {
  index: MemoirIndex;
  paths: string[];
  updates: FileUpdate[];
  fileIds: number[];
}

/**
 * Resolves `--memoir` (or discovers every memoir), brings the index up to date and reports on
 * stderr what changed other than by appends. The caller closes `index`.
 */
export function openIndexed(ctx: Ctx, memoirs: readonly string[], opts: { quiet?: boolean; rebuild?: boolean } = {}): Indexed {
  const home = kouraiHome(ctx);
  const paths = resolveMemoirs(memoirs, home, ctx.cwd);
  const index = openIndex(home);
  try {
    const sizes = paths.map((f) => statSync(f).size);
    const p = progress(ctx.stderr, { label: 'indexing', total: sizes.reduce((a, b) => a + b, 0), unit: 'B', quiet: opts.quiet ?? false });
    const updates: FileUpdate[] = [];
    let before = 0;
    let batches = 0;
    const gc = collector();
    paths.forEach((f, i) => {
      const onProgress = (b: number): void => {
        p.update(before + b);
        if (++batches % 10 === 0) gc(); // bounded memory on big index builds
      };
      const [u] = opts.rebuild ? index.rebuild([f], { now: ctx.now, onProgress }) : index.update([f], { now: ctx.now, onProgress });
      if (u) updates.push(u);
      before += sizes[i] ?? 0;
    });
    p.finish();
    for (const u of updates) {
      if (u.integrity && !opts.quiet) warn(ctx, `${u.path}: ${u.integrity}; the index was rebuilt for it (see \`kourai memoir verify\`)`);
    }
    return { index, paths, updates, fileIds: updates.map((u) => u.fileId) };
  } catch (err) {
    index.close();
    throw err;
  }
}

export function loadRow(row: EntryRow): MemoirEntry {
  return loadEntryAt(row.path, row.offset, row.length, row.entry_id);
}

/** The JSON shape of an entry in command output: the entry plus where it lives and its split verdict. */
export function entryView(row: EntryRow, entry: MemoirEntry): Record<string, unknown> {
  return {
    ...entry,
    entry_id: row.entry_id,
    entry_type: row.entry_type,
    _memoir: { path: row.path, line: row.line, shareable: row.shareable === 1, split_reason: row.split_reason, lenient_split: row.lenient === 1 },
  };
}
