import { readRecords } from './reader.js';
import { decideSplit, entryTypeOf, SPLIT_REASON_TEXT } from './split-rule.js';

export type ProblemKind =
  | 'json'
  | 'schema'
  | 'lenient_split'
  | 'torn_tail'
  | 'duplicate_id'
  | 'not_append'
  | 'identical_line'
  | 'revision';

export interface Problem {
  path: string;
  line: number | null;
  offset: number | null;
  kind: ProblemKind;
  severity: 'error' | 'warning';
  message: string;
  /** The command that fixes or explains it. */
  fix?: string;
}

export interface FileVerification {
  path: string;
  entries: number;
  bytes: number;
  problems: Problem[];
}

/**
 * Streams one memoir and reports every problem a reader would trip over: malformed lines,
 * schema errors, lenient splits (claims shared, the strict rule says private), duplicate
 * explicit ids, identical repeated Python lines, and a torn final fragment.
 * `seenIds` is shared across files so duplicates between memoirs are caught too.
 */
export function verifyFile(path: string, seenIds: Map<string, string>, onProgress?: (bytes: number) => void): FileVerification {
  const problems: Problem[] = [];
  let entries = 0;
  let bytes = 0;
  let n = 0;
  for (const rec of readRecords(path)) {
    bytes = rec.offset + rec.length + 1;
    if (++n % 20000 === 0) onProgress?.(bytes);
    const at = { path, line: rec.line, offset: rec.offset };
    if (rec.kind === 'torn') {
      problems.push({ ...at, kind: 'torn_tail', severity: 'error', message: `torn final fragment of ${rec.length} bytes (a write that never finished)`, fix: `kourai memoir repair --memoir ${path}` });
      continue;
    }
    if (rec.kind === 'invalid') {
      problems.push({ ...at, kind: rec.problem, severity: 'error', message: rec.message });
      continue;
    }
    entries++;
    const e = rec.entry;
    const v = decideSplit({ ...e, entry_type: entryTypeOf(e) });
    if (v.lenient) {
      problems.push({ ...at, kind: 'lenient_split', severity: 'error', message: `split says shared but the entry is private: ${SPLIT_REASON_TEXT[v.reason]}; kourai treats it as private` });
    }
    const prev = seenIds.get(e.entry_id);
    if (prev !== undefined) {
      problems.push({ ...at, kind: 'duplicate_id', severity: 'error', message: `entry id ${e.entry_id} was already used at ${prev}` });
    } else {
      seenIds.set(e.entry_id, `${path}:${rec.line}`);
    }
    if (rec.derived && e.entry_id.includes('~')) {
      problems.push({ ...at, kind: 'identical_line', severity: 'warning', message: `identical to an earlier line (derived id ${e.entry_id})` });
    }
  }
  return { path, entries, bytes, problems };
}
