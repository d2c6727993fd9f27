import type { Ctx } from '../../context.js';
import type { MemoirEntry } from '../../memoir/format/schema.js';
import { indexFeedback } from '../../output/index-feedback.js';
import { openIndexed as openIndexedStore, type IndexedMemoirs } from '../../memoir-index/indexed.js';
import type { EntryRow } from '../../memoir-index/memoir-index.js';
import { unreadOf } from '../../memoir/format/unread.js';

export { loadRow, loadRowLine } from '../../memoir-index/indexed.js';

/**
 * The memoir commands' way to open the index: `--memoir` resolved (or every memoir found), the
 * index brought up to date with progress and warnings on stderr (no progress with `quiet`).
 * `fullText`: the command runs text queries; full-text rows a bulk load left out are built first
 * (with progress; Ctrl-C rolls the file being built back). The caller closes `index`.
 */
export function openIndexed(
  ctx: Ctx,
  memoirs: readonly string[],
  opts: { quiet?: boolean; rebuild?: boolean; mustWrite?: boolean; fullText?: boolean } = {},
): Promise<IndexedMemoirs> {
  return openIndexedStore(ctx, memoirs, {
    rebuild: opts.rebuild ?? false,
    mustWrite: opts.mustWrite ?? false,
    fullText: opts.fullText ?? false,
    feedback: indexFeedback(ctx, opts.quiet ?? false),
  });
}

/** The JSON shape of an entry in command output: the entry plus where it lives and its split verdict. */
export function entryView(row: EntryRow, entry: MemoirEntry): Record<string, unknown> {
  const unread = unreadOf(entry);
  return {
    ...entry,
    entry_id: row.entry_id,
    entry_type: row.entry_type,
    _memoir: {
      path: row.path,
      line: row.line,
      shareable: row.shareable === 1,
      split_reason: row.split_reason,
      lenient_split: row.lenient === 1,
      // extension values kourai could not read, as kept in the line (only when there are some)
      ...(unread ? { unread: [...unread].map(([key, u]) => ({ key, json: u.json, why: u.why })) } : {}),
    },
  };
}
