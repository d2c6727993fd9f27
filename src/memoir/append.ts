import type { z } from 'zod';
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsError, InvalidDataError } from '../errors.js';
import { encodeEntry } from './encode.js';
import type { IdSource } from './entry-id.js';
import { acquireLock, sleepSync } from './lock.js';
import { findTornTail, quarantineTornTail, type QuarantineRecord } from './quarantine.js';
import { fastInput } from './fast-input.js';
import { describeIssue, EXTENSION_KEYS, MemoirInputSchema, type MemoirEntry } from './schema.js';

type MemoirInputParsed = z.output<typeof MemoirInputSchema>;

/** Extension keys a caller may set beyond id, time and type (`interrupt` first, as written). */
const LATER_EXTENSIONS = EXTENSION_KEYS.filter((k) => k !== 'entry_id' && k !== 'recorded_at' && k !== 'entry_type');
import { decideSplit, entryTypeOf, SPLIT_REASON_TEXT } from './split-rule.js';

export interface PreparedEntry {
  entry: MemoirEntry;
  line: string;
  /** Set when the caller asked for shared but the rule made the entry private. */
  narrowed?: string;
}

/** Where an input came from, for error messages: `stdin line 3`, `entries.ndjson line 2`. */
export interface InputItem {
  value: unknown;
  where: string;
}

/**
 * Validates every input and turns it into a complete entry (id, timestamp, type, strict split).
 * Throws on the first invalid input, naming where and which field; nothing is written.
 */
export function prepareEntries(items: readonly InputItem[], ids: IdSource, now: () => Date): PreparedEntry[] {
  const out: PreparedEntry[] = [];
  for (const item of items) {
    let input = fastInput(item.value) as MemoirInputParsed | undefined;
    if (!input) {
      const res = MemoirInputSchema.safeParse(item.value);
      if (!res.success) throw new InvalidDataError(`${item.where}: ${describeIssue(res.error)}`, 'nothing was written; fix the entry and retry');
      input = res.data;
    }
    const entryType = input.entry_type ?? (input.interrupt ? 'interrupt' : entryTypeOf(input));
    const verdict = decideSplit({ agent: input.agent, source: input.source, entry_type: entryType, interrupt: input.interrupt, split: input.split });
    const entry: Record<string, unknown> = {
      scene_id: input.scene_id,
      agent: input.agent,
      source: input.source,
      context: input.context,
      narrative_beat: input.narrative_beat,
      agent_proposed: input.agent_proposed,
      player_response: input.player_response,
      affinity_delta: input.affinity_delta,
      training_label: input.training_label,
      split: { shared_eligible: verdict.shareable, private_only: !verdict.shareable },
      entry_id: input.entry_id ?? ids.next(),
      recorded_at: input.recorded_at ?? now().toISOString(),
      entry_type: entryType,
    };
    for (const k of LATER_EXTENSIONS) if (input[k] !== undefined) entry[k] = input[k];
    const prepared: PreparedEntry = { entry: entry as MemoirEntry, line: encodeEntry(entry as MemoirEntry) };
    if (verdict.lenient) prepared.narrowed = `${item.where}: split narrowed to private: ${SPLIT_REASON_TEXT[verdict.reason]}`;
    out.push(prepared);
  }
  return out;
}

export interface AppendOptions {
  /** fsync the memoir after writing (default true). */
  fsync?: boolean;
  lockWaitMs?: number;
  /** How long a torn tail may still be completed by a live writer before it is quarantined. */
  tornGraceMs?: number;
  now?: () => Date;
}

export interface AppendReport {
  path: string;
  offset: number;
  bytes: number;
  count: number;
  quarantined?: QuarantineRecord;
}

/**
 * Appends whole lines in one O_APPEND write under the kourai lock, so concurrent writers
 * (including Python hosts writing one line per write) never interleave partial lines.
 * A torn tail left by a crashed writer is quarantined first, never glued to our first line.
 */
export function appendLines(path: string, lines: readonly string[], opts: AppendOptions = {}): AppendReport {
  if (lines.length === 0) return { path, offset: 0, bytes: 0, count: 0 };
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (err) {
    throw fsError(err, 'memoir directory', dirname(path));
  }
  const lock = acquireLock(path, { waitMs: opts.lockWaitMs ?? 5000 });
  let fd: number | undefined;
  try {
    let created = false;
    try {
      fd = openSync(path, 'r+');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw fsError(err, 'memoir', path);
      fd = openSync(path, 'wx+');
      created = true;
    }
    let quarantined: QuarantineRecord | undefined;
    let tail = findTornTail(fd);
    // A live writer that splits a line over several writes finishes quickly: give it a moment.
    for (let waited = 0; tail && waited < (opts.tornGraceMs ?? 200); waited += 20) {
      sleepSync(20);
      tail = findTornTail(fd);
    }
    if (tail) quarantined = quarantineTornTail(fd, path, tail, (opts.now ?? (() => new Date()))());
    closeSync(fd);
    fd = openSync(path, 'a');
    const buf = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
    const offset = fstatSync(fd).size;
    let written = 0;
    while (written < buf.length) written += writeSync(fd, buf, written, buf.length - written);
    if (opts.fsync !== false) {
      fsyncSync(fd);
      if (created) fsyncDir(dirname(path));
    }
    return { path, offset, bytes: buf.length, count: lines.length, ...(quarantined ? { quarantined } : {}) };
  } catch (err) {
    if (err instanceof Error && 'exitCode' in err) throw err;
    throw fsError(err, 'memoir', path);
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    lock.release();
  }
}

function fsyncDir(dir: string): void {
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // some filesystems refuse directory fsync; the file itself is synced
  }
}
