/**
 * A set of entry ids in fixed, compact memory: 52-bit hashes in an open-addressing Float64Array
 * table (8 bytes a slot) instead of a million retained strings. Each hash remembers where it was
 * first seen (an integer below 2^32, in a parallel Uint32Array: 12 bytes a slot in all, which keeps
 * `verify` of a million entries under 200 MB). A hash seen twice is only a *candidate* duplicate:
 * `verify` confirms candidates with exact strings in a second, targeted pass, so a hash collision
 * can never report a false duplicate.
 */
export function hash52(s: string): number {
  // FNV-1a over UTF-16 units in two 26-bit lanes (exact in doubles).
  let h1 = 0x811c9dc5 & 0x3ffffff;
  let h2 = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 6;
    h2 = Math.imul(h2 ^ (c + 0x9e37), 0x5bd1e995) >>> 6;
  }
  return h1 * 67108864 + h2; // 26 + 26 bits
}

/** hash52 of the ASCII text in `b[s, e)` (equal to hash52 of that string; no string is made). */
export function hash52Ascii(b: Uint8Array, s: number, e: number): number {
  let h1 = 0x811c9dc5 & 0x3ffffff;
  let h2 = 0x01000193;
  for (let i = s; i < e; i++) {
    const c = b[i] as number;
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 6;
    h2 = Math.imul(h2 ^ (c + 0x9e37), 0x5bd1e995) >>> 6;
  }
  return h1 * 67108864 + h2;
}

/** hash52(prefix + s) from h = hash52(prefix): FNV-1a goes on where it stopped (its two 26-bit lanes are h's halves). */
export function hash52Continue(h: number, s: string): number {
  let h1 = Math.floor(h / 67108864);
  let h2 = h - h1 * 67108864;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 6;
    h2 = Math.imul(h2 ^ (c + 0x9e37), 0x5bd1e995) >>> 6;
  }
  return h1 * 67108864 + h2;
}

export class IdSet {
  private keys: Float64Array;
  private where: Uint32Array;
  private size = 0;

  constructor(capacity = 1 << 16) {
    let n = 1;
    while (n < capacity * 2) n <<= 1;
    this.keys = new Float64Array(n).fill(-1);
    this.where = new Uint32Array(n);
  }

  /** Adds the id; returns where its hash was first seen if it was already present. */
  addOrGet(id: string, location: number): number | undefined {
    return this.addOrGetHash(hash52(id), location);
  }

  /** The same, for a key already hashed to an integer in [0, 2^52). */
  addOrGetHash(h: number, location: number): number | undefined {
    if (!(location >= 0 && location <= 0xffffffff && Number.isInteger(location)))
      throw new RangeError(`IdSet location ${location} is not an integer in [0, 2^32)`);
    const mask = this.keys.length - 1;
    let i = (h % (mask + 1)) & mask;
    for (;;) {
      const k = this.keys[i] as number;
      if (k === -1) break;
      if (k === h) return this.where[i];
      i = (i + 1) & mask;
    }
    this.keys[i] = h;
    this.where[i] = location;
    if (++this.size * 2 > this.keys.length) this.grow();
    return undefined;
  }

  /** Where the id's hash was first seen, or undefined. */
  get(id: string): number | undefined {
    const h = hash52(id);
    const mask = this.keys.length - 1;
    let i = (h % (mask + 1)) & mask;
    for (;;) {
      const k = this.keys[i] as number;
      if (k === -1) return undefined;
      if (k === h) return this.where[i];
      i = (i + 1) & mask;
    }
  }

  private grow(): void {
    const oldK = this.keys;
    const oldW = this.where;
    this.keys = new Float64Array(oldK.length * 2).fill(-1);
    this.where = new Uint32Array(oldK.length * 2);
    const mask = this.keys.length - 1;
    for (let j = 0; j < oldK.length; j++) {
      const h = oldK[j] as number;
      if (h === -1) continue;
      let i = (h % (mask + 1)) & mask;
      while (this.keys[i] !== -1) i = (i + 1) & mask;
      this.keys[i] = h;
      this.where[i] = oldW[j] as number;
    }
  }
}
