import { closeSync, fstatSync, openSync } from 'node:fs';
import type { Problem } from '../../memoir/verify.js';
import type { MemoirIndex } from '../../store/memoir-index.js';
import { loadRevisionGraph } from '../../store/revision-queries.js';

const LABEL = {
  cycle: 'revision cycle',
  dangling: 'dangling revision',
  fork: 'forked revision',
  type_change: 'revision changes the entry type',
  widens_privacy: 'revision widens privacy',
} as const;

/**
 * The revision pass of `memoir verify`: cycles, dangling `supersedes`, forks (two revisions of
 * one entry), revisions that change the entry type or claim to be more shareable than what they
 * replace. Reads the chains from the index, first brought up to date for the files that are
 * still an append of what was indexed. A file that is not is left out of this pass: the
 * append-only check already reports it, and re-indexing it here would record the same change
 * as a second integrity event.
 */
export function revisionProblems(index: MemoirIndex, paths: readonly string[], onBatch?: () => void): Problem[] {
  const skip = new Set(paths.filter((p) => !stillAnAppend(index, p)));
  index.update(
    paths.filter((p) => !skip.has(p)),
    onBatch ? { onProgress: onBatch } : {},
  );
  const fileIds = paths.flatMap((p) => {
    const row = index.file(p);
    return row && !skip.has(p) ? [row.id] : [];
  });
  const graph = loadRevisionGraph(index, fileIds);
  return graph.problems().map((p) => {
    const node = graph.get(p.entry_id);
    return {
      path: node?.row.path ?? paths[0] ?? '',
      line: node?.row.line ?? null,
      offset: node?.row.offset ?? null,
      kind: 'revision',
      severity: 'error',
      message: `${LABEL[p.kind]}: ${p.entry_id}: ${p.message}`,
      fix: `kourai memoir show ${p.entry_id} --history`,
    } satisfies Problem;
  });
}

function stillAnAppend(index: MemoirIndex, path: string): boolean {
  const row = index.file(path);
  if (!row) return true;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    return index.appendOnlyViolation(fd, row, Number(st.size), String(st.dev), String(st.ino)) === undefined;
  } finally {
    closeSync(fd);
  }
}
