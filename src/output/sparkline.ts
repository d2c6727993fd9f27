const BARS = '▁▂▃▄▅▆▇█';

/**
 * A one-line chart of a series (oldest first): the lowest value (or zero, whichever is lower)
 * is ▁, the highest █. An empty series is empty; a flat one is a row of ▁.
 */
export function sparkline(values: readonly number[]): string {
  if (values.length === 0) return '';
  const lo = Math.min(0, ...values);
  const hi = Math.max(...values);
  const span = hi - lo;
  return values
    .map((v) => {
      if (!(span > 1e-12)) return BARS[0];
      const i = Math.round(((v - lo) / span) * (BARS.length - 1));
      return BARS[Math.max(0, Math.min(BARS.length - 1, i))];
    })
    .join('');
}
