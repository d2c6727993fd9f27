import type { PreferenceItem } from './schema.js';

/**
 * The preference a `training_label.preference_pair` states, when kourai understands it: exactly
 * two items, each with a string `text` and a finite numeric `score` (1 and 1.0 alike), the scores
 * different; the higher-scored text is preferred. Other keys of an item are kept in the memoir but
 * not read. Any other list (upstream allows any `list[dict]`) states no pair to kourai, and the
 * trainer counts it as unused rather than guessing.
 */
export function understoodPair(
  pp: readonly PreferenceItem[] | null | undefined,
): { chosen: string; rejected: string } | null {
  if (!pp || pp.length !== 2) return null;
  const [a, b] = pp as [PreferenceItem, PreferenceItem];
  if (typeof a.text !== 'string' || typeof b.text !== 'string') return null;
  const sa = a.score;
  const sb = b.score;
  if (typeof sa !== 'number' || typeof sb !== 'number' || !Number.isFinite(sa) || !Number.isFinite(sb)) return null;
  if (sa === sb) return null;
  return sa > sb ? { chosen: a.text, rejected: b.text } : { chosen: b.text, rejected: a.text };
}

/** Whether a label holds a preference list that states no pair kourai reads (counted, not trained on). */
export function unusedPreference(pp: readonly PreferenceItem[] | null | undefined): boolean {
  return pp !== null && pp !== undefined && understoodPair(pp) === null;
}
