import type { z } from 'zod';

/**
 * Plain one-line messages for bad flag values, in place of zod's validator wording ("Invalid
 * input: expected number, received NaN"). Passed to every options parse as its error map; a
 * schema's own message (e.g. "unknown agent …") still wins. Zod is only a type here: this module
 * is loaded at start-up, before any command (and zod) is.
 */
type RawIssue = z.core.$ZodRawIssue;

const fmt = (n: number | bigint): string => (typeof n === 'bigint' ? n.toString() : Number.isInteger(n) ? String(n) : String(n));

export function optionError(iss: RawIssue): string | undefined {
  switch (iss.code) {
    case 'invalid_type': {
      if (iss.input === undefined) return 'is required';
      if (iss.expected === 'number' || iss.expected === 'int') {
        if (typeof iss.input === 'number' && Number.isNaN(iss.input)) return 'not a number';
        if (typeof iss.input === 'number' && !Number.isFinite(iss.input)) return 'out of range: give a finite number';
        if (typeof iss.input === 'number' && iss.expected === 'int') return 'must be a whole number';
        return 'not a number';
      }
      return `expected ${iss.expected}`;
    }
    case 'too_small':
      if (iss.origin === 'string') return Number(iss.minimum) <= 1 ? 'must not be empty' : `at least ${fmt(iss.minimum)} characters`;
      if (iss.origin === 'array') return `give at least ${fmt(iss.minimum)}`;
      return iss.inclusive === false ? `must be greater than ${fmt(iss.minimum)}` : `must be ${fmt(iss.minimum)} or more`;
    case 'too_big':
      if (iss.origin === 'string') return `at most ${fmt(iss.maximum)} characters`;
      return iss.inclusive === false ? `must be less than ${fmt(iss.maximum)}` : `must be ${fmt(iss.maximum)} or less`;
    case 'invalid_value':
      return `expected one of: ${iss.values.map(String).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${iss.divisor}`;
    case 'invalid_format':
      return iss.format === 'regex' ? 'has characters that are not allowed' : `not a valid ${iss.format}`;
    default:
      return undefined;
  }
}
