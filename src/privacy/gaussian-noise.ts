/**
 * Gaussian noise from a cryptographically secure byte source (node:crypto through
 * `ctx.secureRandom`), never Math.random.
 *
 * Uniforms carry 53 random bits (the full double mantissa); normals come from Marsaglia's polar
 * method, which is exact for exact uniforms and needs no trigonometry. Bytes are drawn in
 * blocks to keep the per-sample cost low.
 */

/** A source of cryptographically secure random bytes, e.g. `crypto.randomBytes`. */
export type SecureBytes = (n: number) => Buffer;

const TWO_POW_32 = 2 ** 32;
const TWO_POW_53 = 2 ** 53;

export class GaussianSampler {
  private readonly source: SecureBytes;
  private readonly blockBytes: number;
  private words: Uint32Array = new Uint32Array(0);
  private pos = 0;
  private spare: number | undefined;

  constructor(source: SecureBytes, opts: { blockBytes?: number } = {}) {
    this.source = source;
    this.blockBytes = Math.max(16, Math.floor((opts.blockBytes ?? 64 * 1024) / 8) * 8);
  }

  /** A uniform double in [0, 1) with 53 random bits (21 from one 32-bit word, 32 from the next). */
  uniform(): number {
    if (this.pos + 2 > this.words.length) this.refill();
    const hi = (this.words[this.pos] as number) >>> 11;
    const lo = this.words[this.pos + 1] as number;
    this.pos += 2;
    return (hi * TWO_POW_32 + lo) / TWO_POW_53;
  }

  private refill(): void {
    const b = this.source(this.blockBytes);
    if (!Buffer.isBuffer(b) || b.length < 8) throw new Error('secure random source returned too few bytes');
    const n = Math.floor(b.length / 8) * 2;
    // Copy into an aligned array of 32-bit words (native byte order: every bit is random either way).
    this.words = new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + n * 4));
    this.pos = 0;
  }

  /** One standard normal deviate (Marsaglia polar; the second of each pair is kept). */
  standardNormal(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    for (;;) {
      const v1 = 2 * this.uniform() - 1;
      const v2 = 2 * this.uniform() - 1;
      const s = v1 * v1 + v2 * v2;
      if (s >= 1 || s === 0) continue;
      const f = Math.sqrt((-2 * Math.log(s)) / s);
      this.spare = v2 * f;
      return v1 * f;
    }
  }

  /** Fills `out` with N(0, stddev²) deviates. */
  fill(out: Float64Array | Float32Array, stddev = 1): void {
    for (let i = 0; i < out.length; i++) out[i] = this.standardNormal() * stddev;
  }

  /** Adds N(0, stddev²) to every element of `data` in place (float64 sum, then stored). */
  addTo(data: Float32Array | Float64Array, stddev: number): void {
    for (let i = 0; i < data.length; i++) data[i] = (data[i] as number) + this.standardNormal() * stddev;
  }
}
