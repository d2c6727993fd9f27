import { IdSet } from './id-set.js';
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
 * `seen` is shared across files so duplicates between memoirs are caught too; it stores numbers,
 * not strings, to keep a million ids in bounded memory.
 */
export interface SeenIds {
  files: string[];
  ids: IdSet;
  /** Locations (file number × 2^32 + line) whose id hash was seen before: to confirm. */
  candidates: { at: number; first: number }[];
}

export function newSeenIds(): SeenIds {
  return { files: [], ids: new IdSet(), candidates: [] };
}

export function verifyFile(path: string, seen: SeenIds, onProgress?: (bytes: number) => void): FileVerification {
  const fileNo = seen.files.push(path) - 1;
  const problems: Problem[] = [];
  let entries = 0;
  let bytes = 0;
  let n = 0;
  for (const rec of readRecords(path)) {
    bytes = rec.offset + rec.length + 1;
    if (++n % 25000 === 0) onProgress?.(bytes);
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
    const here = fileNo * 2 ** 32 + rec.line;
    const first = seen.ids.addOrGet(e.entry_id, here);
    if (first !== undefined) seen.candidates.push({ at: here, first });
    if (rec.derived && e.entry_id.includes('~')) {
      problems.push({ ...at, kind: 'identical_line', severity: 'warning', message: `identical to an earlier line (derived id ${e.entry_id})` });
    }
  }
  return { path, entries, bytes, problems };
}

/**
 * Confirms candidate duplicates with exact ids (a second pass that reads only the lines involved)
 * and returns the real ones as problems.
 */
export function confirmDuplicates(seen: SeenIds): Problem[] {
  if (seen.candidates.length === 0) return [];
  const wanted = new Map<number, Set<number>>(); // file number -> lines to read
  for (const c of seen.candidates) {
    for (const loc of [c.at, c.first]) {
      const f = Math.floor(loc / 2 ** 32);
      let s = wanted.get(f);
      if (!s) wanted.set(f, (s = new Set()));
      s.add(loc % 2 ** 32);
    }
  }
  const idAt = new Map<number, string>();
  for (const [f, lines] of wanted) {
    for (const rec of readRecords(seen.files[f] as string)) {
      if (rec.kind === 'entry' && lines.has(rec.line)) idAt.set(f * 2 ** 32 + rec.line, rec.entry.entry_id);
    }
  }
  const out: Problem[] = [];
  for (const c of seen.candidates) {
    const id = idAt.get(c.at);
    if (id === undefined || id !== idAt.get(c.first)) continue; // a hash collision, not a duplicate
    const path = seen.files[Math.floor(c.at / 2 ** 32)] as string;
    out.push({
      path,
      line: c.at % 2 ** 32,
      offset: null,
      kind: 'duplicate_id',
      severity: 'error',
      message: `entry id ${id} was already used at ${seen.files[Math.floor(c.first / 2 ** 32)]}:${c.first % 2 ** 32}`,
    });
  }
  return out;
}
