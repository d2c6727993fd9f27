import { derivedId } from './entry-id.js';
import { isValidLine } from './fast-validate.js';
import { coerceLax } from './lax.js';
import { parseLaxJson } from './lax-json.js';
import { keepRawContexts } from './py-object.js';
import { keepUnread, setAsideExtensions } from './unread.js';
import { hasLoneSurrogate } from './utf8.js';
import { createRequire } from 'node:module';
import type * as Schema from './schema.js';
import type { MemoirEntry } from './schema.js';

/**
 * The zod schema (the schema of record) runs here only for a line `isValidLine` rejects, to word
 * the error (a property test holds the two verdicts together). Importing zod is most of a short command's start-up
 * (`memoir inspect`), so the built CLI loads the schema on the first invalid line, synchronously
 * (`require` of an ES module: Node ≥ 20.19). Where that is not available (`--no-experimental-require-module`, vitest
 * running the TypeScript sources) it is imported up front, as before.
 */
type SchemaModule = typeof Schema;
const lazy = process.features.require_module === true && import.meta.url.endsWith('.js');
const eager: SchemaModule | undefined = lazy ? undefined : await import('./schema.js');
const schema = (): SchemaModule => eager ?? (createRequire(import.meta.url)('./schema.js') as SchemaModule);

export type ParsedLine =
  | { ok: true; entry: MemoirEntry; derived: boolean }
  | { ok: false; problem: 'json' | 'schema' | 'utf8'; message: string };

/**
 * Parses one stored line (without its newline). `occurrence` numbers identical Python lines so
 * their derived ids differ. Never throws.
 */
export function parseLine(text: string, occurrenceOf?: (baseId: string) => number): ParsedLine {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    try {
      raw = parseLaxJson(text); // pydantic also reads the bare tokens NaN, Infinity and -Infinity
    } catch {
      return { ok: false, problem: 'json', message: `malformed JSON: ${(err as Error).message}` };
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, problem: 'json', message: 'a memoir line must be a JSON object' };
  }
  if (hasLoneSurrogate(text, () => raw)) {
    return {
      ok: false,
      problem: 'utf8',
      message:
        'a string holds a lone surrogate (a \\udXXX escape without its pair): not Unicode text, and Python readers refuse the line',
    };
  }
  let entry: MemoirEntry;
  let valid = isValidLine(raw);
  let unread: ReturnType<typeof setAsideExtensions>;
  if (!valid) {
    coerceLax(raw as Record<string, unknown>); // pydantic's lax spellings become the values it holds
    valid = isValidLine(raw);
  }
  if (!valid) {
    // pydantic ignores kourai's extension keys: a value kourai cannot read is kept, not read (unread.ts)
    unread = setAsideExtensions(raw as Record<string, unknown>);
    if (unread) valid = isValidLine(raw);
  }
  if (valid) entry = withDefaults(raw as Record<string, unknown>);
  else {
    // zod is the schema of record: it words the error (and decides, should the fast check disagree).
    const { MemoirLineSchema, describeIssue } = schema();
    const res = MemoirLineSchema.safeParse(raw);
    if (!res.success) return { ok: false, problem: 'schema', message: describeIssue(res.error) };
    entry = res.data as MemoirEntry;
  }
  keepRawContexts(text, entry);
  if (unread) keepUnread(entry, unread, text);
  if (typeof entry.entry_id === 'string') return { ok: true, entry, derived: false };
  const base = derivedId(text); // hashed once: the occurrence only adds a suffix
  const occurrence = occurrenceOf ? occurrenceOf(base) : 1;
  entry.entry_id = occurrence > 1 ? `${base}~${occurrence}` : base;
  return { ok: true, entry, derived: true };
}

type Obj = Record<string, unknown>;

/** Upstream's defaults for the keys a line left out (the same as MemoirLineSchema's), in place. */
export function withDefaults(e: Obj): MemoirEntry {
  if (e.context === undefined) e.context = null;
  if (e.narrative_beat === undefined) e.narrative_beat = null;
  if (e.agent_proposed === undefined) e.agent_proposed = null;
  const r = e.player_response as Obj | null | undefined;
  if (r === undefined) e.player_response = null;
  else if (r !== null) {
    if (r.delta === undefined) r.delta = null;
    if (r.felt === undefined) r.felt = null;
  }
  if (e.affinity_delta === undefined) e.affinity_delta = 0;
  const t = e.training_label as Obj | null | undefined;
  if (t === undefined) e.training_label = null;
  else if (t !== null) {
    if (t.preference_pair === undefined) t.preference_pair = null;
    if (t.weight === undefined) t.weight = 1;
  }
  // no split: no claim to be shared (kourai never widens what a line says)
  const s = e.split as Obj | undefined;
  if (s === undefined) e.split = { shared_eligible: false, private_only: false };
  else {
    if (s.shared_eligible === undefined) s.shared_eligible = false;
    if (s.private_only === undefined) s.private_only = false;
  }
  return e as MemoirEntry;
}
