import { InvalidDataError, UsageError } from '../../errors.js';
import type { MemoirEntry } from '../format/schema.js';
import { entryTypeOf } from '../format/split-rule.js';
import { isDeclared } from '../format/undeclared.js';
import { unreadOf, type Unread } from '../format/unread.js';

/**
 * Building a correction (a revision) of an entry. Pure: the command finds the entry, decides
 * its effective split with the revision chain, and writes what this returns through the
 * ordinary append path (validation, strict split, one O_APPEND write).
 *
 * Rules:
 * - The correction is a patch merged over the entry it replaces: objects merge key by key
 *   (recursively), anything else — strings, numbers, arrays, `null` — replaces the old value.
 *   `null` sets a field to null (it does not delete it). A complete entry is also a valid patch.
 * - The revision names the replaced id in `supersedes` and carries the reason in
 *   `revision_reason`. `entry_id`, `recorded_at`, `supersedes` and `revision_reason` cannot be
 *   patched (they are the revision's own).
 * - It keeps the entry type: a patch may repeat it, never change it.
 * - It never widens privacy: when the replaced entry is private (by the strict rule, its own
 *   split, or a private ancestor), the revision is written private whatever the patch says.
 *   The revision's own policy (agent, source, type) can still make it more private.
 * - The revision is an entry of the upstream model plus kourai's keys: top-level keys of the original
 *   that no model declares are left out, one warning each, as pydantic's `model_dump_json()` leaves
 *   them out (and as `append` does, undeclared.ts); a patch may not set one. The original's
 *   extension values kourai cannot read (unread.ts) are kept, unless the patch sets the key or it
 *   is the revision's own key or its type.
 */

const OWN_KEYS = ['entry_id', 'recorded_at', 'supersedes', 'revision_reason'] as const;
/** The revision writes these itself: an unread value under one is not carried over. */
const NOT_CARRIED: ReadonlySet<string> = new Set<string>([...OWN_KEYS, 'entry_type']);

export interface RevisionRequest {
  /** The entry being replaced (the newest revision of its chain). */
  original: MemoirEntry;
  /** Whether the original may leave the forge, chain included (RevisionGraph.effectiveShareable). */
  originalShareable: boolean;
  patch: unknown;
  reason: string;
}

export interface BuiltRevision {
  /** A new entry for `prepareEntries` (MemoirInputSchema keys only). */
  input: Record<string, unknown>;
  /** One warning per top-level key of the original that no model declares, left out of the revision. */
  ignored: string[];
  /** The original's unread extension values the revision keeps (unread.ts), or undefined. */
  unread?: Unread;
  /** Top-level fields whose value changed. */
  changed: string[];
  /** Set when the patch asked for (or kept) a shared split that the original's privacy forbids. */
  narrowed?: string;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * JSON-merge of `patch` over `base`; `null` sets null; arrays and scalars replace. What the patch
 * does not touch is the base's own value (not a copy), so a context keeps what its parse kept
 * (py-object.ts: number forms and key order, carried by the spread).
 */
export function mergePatch(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch) || !isPlainObject(base)) return structuredClone(patch);
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? mergePatch(out[k], v) : structuredClone(v);
  }
  return out;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function buildRevision(req: RevisionRequest): BuiltRevision {
  const reason = req.reason.trim();
  if (reason === '')
    throw new UsageError('--reason must say why the entry is corrected', 'e.g. --reason "wrong agent: it was Aidos"');
  if (!isPlainObject(req.patch))
    throw new InvalidDataError(
      'the correction must be a JSON object (a patch of the fields to change, or a whole entry)',
      'nothing was written',
    );
  const patch = req.patch;
  for (const k of OWN_KEYS) {
    if (k in patch)
      throw new InvalidDataError(
        `the correction cannot set "${k}": a revision gets its own ${k === 'revision_reason' ? 'reason from --reason' : k}`,
        'nothing was written; remove the key',
      );
  }
  const type = entryTypeOf(req.original);
  if ('entry_type' in patch && patch.entry_type !== type) {
    throw new InvalidDataError(
      `a revision keeps the entry type: ${req.original.entry_id} is "${type}", the correction says ${JSON.stringify(patch.entry_type)}`,
      'nothing was written; append a new entry instead of correcting this one',
    );
  }
  const base: Record<string, unknown> = { ...req.original, entry_type: type };
  for (const k of OWN_KEYS) delete base[k];
  const merged = mergePatch(base, patch) as Record<string, unknown>;

  for (const k of Object.keys(patch)) {
    if (!isDeclared(k))
      throw new InvalidDataError(`unknown key "${k}" in the correction (not a memoir field)`, 'nothing was written');
  }
  const input: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [k, v] of Object.entries(merged)) {
    if (isDeclared(k)) input[k] = v;
    else
      ignored.push(
        `${req.original.entry_id}: key "${k}" is not a memoir field; left out of the revision, as the upstream model leaves it out`,
      );
  }
  let narrowed: string | undefined;
  if (!req.originalShareable) {
    const asked = isPlainObject(input.split) ? input.split : undefined;
    const claimsShared = asked === undefined || (asked.shared_eligible === true && asked.private_only !== true);
    input.split = { shared_eligible: false, private_only: true };
    if (claimsShared)
      narrowed = `split written private: ${req.original.entry_id} is private, and a revision can never widen privacy`;
  }
  const changed = Object.keys(input).filter((k) => !same(input[k], base[k]));
  if (changed.length === 0) {
    if (narrowed !== undefined) {
      throw new InvalidDataError(
        `the correction only asks to make ${req.original.entry_id} shared; it is private, and a revision can never widen privacy`,
        'nothing was written',
      );
    }
    throw new UsageError(
      `the correction changes nothing in ${req.original.entry_id}`,
      'give the fields to change, e.g. \'{"agent_proposed":"…"}\'',
    );
  }
  input.supersedes = req.original.entry_id;
  input.revision_reason = reason;
  const built: BuiltRevision = { input, ignored, changed };
  const unread = unreadOf(req.original);
  if (unread !== undefined) {
    const kept = new Map([...unread].filter(([k]) => !NOT_CARRIED.has(k) && !(k in patch)));
    if (kept.size > 0) built.unread = kept;
  }
  if (narrowed !== undefined) built.narrowed = narrowed;
  return built;
}
