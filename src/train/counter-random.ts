/**
 * The counter-based generator the base weights come from: value(seed, stream, index) is a pure
 * function of three 32-bit integers (murmur3's finaliser, three rounds), so any single weight can
 * be produced on demand, in any order, bit for bit the same on every machine. Part of the
 * published base specification (docs in README "Local learning"); changing it changes the
 * fingerprint of every base.
 */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** 32 random bits for (seed, stream, index). */
export function counterBits(seed: number, stream: number, index: number): number {
  let h = fmix32((seed ^ Math.imul(stream, 0x9e3779b1)) >>> 0);
  h = fmix32((h ^ index) >>> 0);
  return fmix32((h + 0x632be5ab) >>> 0);
}

const TWO_POW_M23 = 2 ** -23;

/** Uniform on [-1, 1) with 24 bits of resolution (exact in float32). */
export function counterUniform(seed: number, stream: number, index: number): number {
  return (counterBits(seed, stream, index) >>> 8) * TWO_POW_M23 - 1;
}

/**
 * scale · counterUniform(seed, stream, start + k) into out[at + k] for k < n: a run of weights
 * (a column of the base), with the (seed, stream) mix computed once instead of per weight.
 */
export function counterUniforms(
  seed: number,
  stream: number,
  start: number,
  scale: number,
  out: Float32Array | Float64Array,
  at: number,
  n: number,
): void {
  const s = fmix32((seed ^ Math.imul(stream, 0x9e3779b1)) >>> 0);
  for (let k = 0; k < n; k++) {
    const h = fmix32((s ^ (start + k)) >>> 0);
    out[at + k] = scale * ((fmix32((h + 0x632be5ab) >>> 0) >>> 8) * TWO_POW_M23 - 1);
  }
}
