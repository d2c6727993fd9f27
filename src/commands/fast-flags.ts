/**
 * Flag values checked without zod, for the fast side of lazy options (commands/types.ts). Each
 * helper returns the value exactly as the command's zod schema would, or `UNSURE` for anything it
 * does not vouch for (a wrong value, an unexpected type): then the schema decides and words the
 * error. Property tests (test/commands/fast-options.test.ts) hold each command's pair together.
 */
export const UNSURE: unique symbol = Symbol('unsure');
export type Maybe<T> = T | typeof UNSURE;

/** A repeatable flag (`collect`): absent is []; with `allowed`, every value must be one of them. */
export function stringList(v: unknown, allowed?: ReadonlySet<string>): Maybe<string[]> {
  if (v === undefined) return [];
  if (!Array.isArray(v)) return UNSURE;
  for (const x of v) if (typeof x !== 'string' || (allowed !== undefined && !allowed.has(x))) return UNSURE;
  return [...(v as string[])];
}

export function optionalString(v: unknown): Maybe<string | undefined> {
  return v === undefined || typeof v === 'string' ? v : UNSURE;
}

/** One of `allowed`, or `fallback` when absent (undefined: optional). */
export function oneOf<T extends string>(v: unknown, allowed: readonly T[], fallback?: T): Maybe<T | undefined> {
  if (v === undefined) return fallback;
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : UNSURE;
}

export function flag(v: unknown, fallback: boolean): Maybe<boolean> {
  if (v === undefined) return fallback;
  return typeof v === 'boolean' ? v : UNSURE;
}

/** A date or time flag, as ISO 8601 (`--since 2026-11-22`). */
export function optionalTime(v: unknown): Maybe<string | undefined> {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') return UNSURE;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? UNSURE : d.toISOString();
}

/** A number flag (`z.coerce.number()`): a string or number that converts to a finite number in [min, max]. */
export function number(v: unknown, opts: { min?: number; max?: number; int?: boolean }): Maybe<number> {
  if (typeof v !== 'string' && typeof v !== 'number') return UNSURE;
  const n = Number(v);
  if (!Number.isFinite(n) || (opts.int === true && !Number.isSafeInteger(n))) return UNSURE;
  if ((opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) return UNSURE;
  return n;
}

/** Builds the parsed options, or undefined when any value is UNSURE. */
export function allSure<T extends Record<string, unknown>>(o: { [K in keyof T]: Maybe<T[K]> }): T | undefined {
  for (const k in o) if (o[k] === UNSURE) return undefined;
  return o as T;
}
