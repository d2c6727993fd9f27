/**
 * An encoded text: sparse, indices strictly ascending (summation order is fixed, so results are
 * bit for bit reproducible), values L2-normalised. A dense embedding is the same with every index.
 */
export interface Features {
  idx: Int32Array;
  val: Float64Array;
}

export function denseFeatures(v: ArrayLike<number>): Features {
  const idx = new Int32Array(v.length);
  const val = new Float64Array(v.length);
  let s = 0;
  for (let i = 0; i < v.length; i++) s += (v[i] as number) * (v[i] as number);
  const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let i = 0; i < v.length; i++) {
    idx[i] = i;
    val[i] = (v[i] as number) * inv;
  }
  return { idx, val };
}
