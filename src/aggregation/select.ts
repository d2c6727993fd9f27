/**
 * Order statistics on small scratch buffers (one coordinate across n updates), in place:
 * Hoare-style quickselect with median-of-three pivots, insertion sort for short ranges.
 */

/** Rearranges buf[lo..hi] so that buf[k] is the value of rank k, smaller left, larger right. */
export function selectInPlace(buf: Float64Array, lo: number, hi: number, k: number): void {
  while (hi - lo > 16) {
    const mid = (lo + hi) >>> 1;
    // median of three to buf[mid]
    if ((buf[mid] as number) < (buf[lo] as number)) swap(buf, mid, lo);
    if ((buf[hi] as number) < (buf[lo] as number)) swap(buf, hi, lo);
    if ((buf[hi] as number) < (buf[mid] as number)) swap(buf, hi, mid);
    const pivot = buf[mid] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((buf[i] as number) < pivot) i++;
      while ((buf[j] as number) > pivot) j--;
      if (i <= j) {
        swap(buf, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
  insertionSort(buf, lo, hi);
}

export function insertionSort(buf: Float64Array, lo: number, hi: number): void {
  for (let i = lo + 1; i <= hi; i++) {
    const x = buf[i] as number;
    let j = i - 1;
    while (j >= lo && (buf[j] as number) > x) {
      buf[j + 1] = buf[j] as number;
      j--;
    }
    buf[j + 1] = x;
  }
}

function swap(buf: Float64Array, a: number, b: number): void {
  const t = buf[a] as number;
  buf[a] = buf[b] as number;
  buf[b] = t;
}

/** Median of buf[0..n-1] (mean of the two middle values when n is even, as NumPy). Reorders buf. */
export function medianInPlace(buf: Float64Array, n: number): number {
  const mid = n >>> 1;
  selectInPlace(buf, 0, n - 1, mid);
  const upper = buf[mid] as number;
  if (n % 2 === 1) return upper;
  let lower = -Infinity;
  for (let i = 0; i < mid; i++) if ((buf[i] as number) > lower) lower = buf[i] as number;
  return (lower + upper) / 2;
}

/**
 * Mean of the `beta` values closest to `centre` among buf[0..n-1] (Bulyan's second stage).
 * Ties in distance prefer the smaller value. Reorders buf.
 */
export function meanClosest(buf: Float64Array, n: number, centre: number, beta: number): number {
  if (beta >= n) {
    let s = 0;
    for (let i = 0; i < n; i++) s += buf[i] as number;
    return s / n;
  }
  // The beta closest values to the median form a contiguous window of the sorted values:
  // sort (n is small: n − 2f), then grow the window from the median outwards.
  if (n > 48) buf.subarray(0, n).sort();
  else insertionSort(buf, 0, n - 1);
  let lo = 0;
  while (lo < n && (buf[lo] as number) < centre) lo++;
  // window [a, b) starts empty at the insertion point of the centre
  let a = lo;
  let b = lo;
  while (b - a < beta) {
    if (a === 0) b++;
    else if (b === n) a--;
    else if (centre - (buf[a - 1] as number) <= (buf[b] as number) - centre) a--;
    else b++;
  }
  let s = 0;
  for (let i = a; i < b; i++) s += buf[i] as number;
  return s / beta;
}
