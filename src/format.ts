/**
 * One rule for figures in human text (screens, renders, messages): counts with their noun in
 * the right number and thousands separators, affinity to two decimals, ε to four significant
 * digits, δ as people write it. JSON output carries the raw numbers.
 */

/** `1 entry`, `2 entries`, `12,345 entries`. */
export function count(n: number, noun: string, pluralNoun = `${noun}s`): string {
  return `${n.toLocaleString('en-US', { maximumFractionDigits: 2 })} ${plural(n, noun, pluralNoun)}`;
}

/** The noun for n things: `entry` for 1, `entries` otherwise (0.5 beats, 0 beats). */
export function plural(n: number, noun: string, pluralNoun = `${noun}s`): string {
  return n === 1 ? noun : pluralNoun;
}

/** Affinity and anything on its scale (tier distances): always two decimals. */
export function affinity(a: number): string {
  const s = a.toFixed(2);
  return s === '-0.00' ? '0.00' : s;
}

/** A change of affinity: `+0.02`, `-0.05`, `0`; a change too small for two decimals keeps its sign (`+0.00`). */
export function signedAffinity(d: number): string {
  if (d === 0) return '0';
  return `${d > 0 ? '+' : '-'}${Math.abs(d).toFixed(2)}`;
}

/** ε to four significant digits, never in exponent notation for ordinary values. */
export function epsilon(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  if (x >= 1000) return x.toFixed(0);
  return x
    .toPrecision(4)
    .replace(/(\.\d*?)0+$/, '$1')
    .replace(/\.$/, '');
}

/** δ as people write it: 1e-5 rather than 0.00001. */
export function delta(d: number): string {
  return d < 1e-3 ? d.toExponential() : String(d);
}

/** A fraction of something (0–1), e.g. |clip Δ|/S: two decimals. */
export function ratio(x: number): string {
  return x.toFixed(2);
}

/** A duration in seconds: `0.52 s`, `12.3 s`, `95 s`. */
export function seconds(s: number): string {
  return s < 10 ? `${s.toFixed(2)} s` : s < 100 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}
