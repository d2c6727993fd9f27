import { InvalidDataError } from '../../errors.js';
import { EXTENSION_KEYS, STANDARD_KEYS } from './fields.js';
import { closest } from './schema.js';

const DECLARED: ReadonlySet<string> = new Set<string>([...STANDARD_KEYS, ...EXTENSION_KEYS]);

/** Whether the upstream model or kourai declares this top-level key. */
export function isDeclared(key: string): boolean {
  return DECLARED.has(key);
}

/** Names a misspelt top-level key may have meant, with where the field really lives. */
const MEANT: ReadonlyMap<string, string> = new Map([
  ...[...DECLARED].map((k) => [k, k] as const),
  ['shared_eligible', 'split.shared_eligible'],
  ['private_only', 'split.private_only'],
]);
const MEANT_NAMES = [...MEANT.keys()];

/**
 * Takes out of a new entry the top-level keys neither the upstream model nor kourai declares, as
 * pydantic does (it ignores them, and `model_dump_json()` leaves them out), and returns one warning
 * each. A near miss of a field name is refused instead: written, the value would be lost for good.
 */
export function leaveOutUndeclared(value: Record<string, unknown>, where: string): string[] | undefined {
  let warnings: string[] | undefined;
  for (const k of Object.keys(value)) {
    if (DECLARED.has(k)) continue;
    const near = closest(k, MEANT_NAMES);
    if (near !== undefined)
      throw new InvalidDataError(
        `${where}: unknown key "${k}" (did you mean "${MEANT.get(near) ?? near}"?)`,
        'nothing was written; fix the entry and retry',
      );
    delete value[k];
    (warnings ??= []).push(`${where}: key "${k}" is not a memoir field; left out, as the upstream model leaves it out`);
  }
  return warnings;
}
