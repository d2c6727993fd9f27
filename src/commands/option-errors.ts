import type { z } from 'zod';

/**
 * Plain one-line messages for bad flag values, in place of zod's validator wording ("Invalid
 * input: expected number, received NaN"): `--limit: "abc" is not a number`. Passed to every
 * options parse as its error map; a schema's own message (e.g. "unknown agent …") still wins.
 * Zod is only a type here: this module is loaded at start-up, before any command (and zod) is.
 */
type RawIssue = z.core.$ZodRawIssue;

const show = (v: unknown): string =>
  typeof v === 'string' ? `"${v}"` : Array.isArray(v) ? v.map(show).join(', ') : String(v);
const num = (n: number | bigint): string => String(n);

export function optionError(iss: RawIssue, raw: Readonly<Record<string, unknown>>): string | undefined {
  const key = iss.path?.[0];
  const given: unknown = key === undefined ? iss.input : (raw[String(key)] ?? iss.input);
  switch (iss.code) {
    case 'invalid_type': {
      if (given === undefined) return 'is required';
      if (iss.expected === 'number' || iss.expected === 'int') {
        if (typeof iss.input === 'number' && Number.isFinite(iss.input)) return `${show(given)} is not a whole number`;
        if (typeof iss.input === 'number' && !Number.isNaN(iss.input))
          return `${show(given)} is out of range (give a finite number)`;
        return `${show(given)} is not a number`;
      }
      return `${show(given)} is not a ${iss.expected}`;
    }
    case 'too_small':
      if (iss.origin === 'string')
        return Number(iss.minimum) <= 1 ? 'must not be empty' : `must have at least ${num(iss.minimum)} characters`;
      if (iss.origin === 'array') return `give at least ${num(iss.minimum)}`;
      return `must be ${iss.inclusive === false ? `greater than ${num(iss.minimum)}` : `${num(iss.minimum)} or more`}, not ${show(given)}`;
    case 'too_big':
      if (iss.origin === 'string') return `must have at most ${num(iss.maximum)} characters`;
      return `must be ${iss.inclusive === false ? `less than ${num(iss.maximum)}` : `${num(iss.maximum)} or less`}, not ${show(given)}`;
    case 'invalid_value':
      return `${show(given)} is not one of: ${iss.values.map(String).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${iss.divisor}, not ${show(given)}`;
    case 'invalid_format':
      return iss.format === 'regex'
        ? `${show(given)} has characters that are not allowed`
        : `${show(given)} is not a valid ${iss.format}`;
    default:
      return undefined;
  }
}
