import * as nodeCrypto from 'node:crypto';

/**
 * Entry ids. kourai writes ULIDs (time-ordered: 48-bit milliseconds + 80 random bits, Crockford
 * base32, monotonic within a millisecond). Python hosts write no id: a line's id is derived from
 * its bytes, `py_` + 24 base32 characters of SHA-256, and `~N` for the Nth identical line in a
 * file, so every entry is addressable and the id never changes as the file grows.
 */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function encodeTime(ms: number): string {
  const codes = new Array<number>(10);
  let t = ms;
  for (let i = 9; i >= 0; i--) {
    codes[i] = CROCKFORD.charCodeAt(t % 32);
    t = Math.floor(t / 32);
  }
  return String.fromCharCode(...codes);
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits -> 16 base32 characters, as two 40-bit halves (exact in a double).
  const codes = new Array<number>(16);
  for (let half = 0; half < 2; half++) {
    let acc = 0;
    for (let i = 0; i < 5; i++) acc = acc * 256 + (bytes[half * 5 + i] ?? 0);
    for (let i = 7; i >= 0; i--) {
      codes[half * 8 + i] = CROCKFORD.charCodeAt(acc % 32);
      acc = Math.floor(acc / 32);
    }
  }
  return String.fromCharCode(...codes);
}

export interface IdSource {
  next(): string;
}

/** A monotonic ULID generator: ids from one generator always sort in creation order. */
export function ulidGenerator(now: () => number, random: (n: number) => Uint8Array): IdSource {
  let lastMs = -1;
  let lastRand: Uint8Array = new Uint8Array(10);
  return {
    next() {
      let ms = now();
      if (ms <= lastMs) {
        ms = lastMs;
        lastRand = increment(lastRand);
      } else {
        lastMs = ms;
        lastRand = Uint8Array.from(random(10));
      }
      return encodeTime(ms) + encodeRandom(lastRand);
    },
  };
}

function increment(r: Uint8Array): Uint8Array {
  const out = Uint8Array.from(r);
  for (let i = out.length - 1; i >= 0; i--) {
    const v = (out[i] ?? 0) + 1;
    out[i] = v & 0xff;
    if (v <= 0xff) return out;
  }
  throw new RangeError('ULID random component overflowed within one millisecond');
}

export const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The millisecond timestamp inside a ULID, or undefined for a derived id. */
export function ulidTime(id: string): number | undefined {
  if (!ULID_RE.test(id)) return undefined;
  let t = 0;
  for (const ch of id.slice(0, 10)) t = t * 32 + CROCKFORD.indexOf(ch);
  return t;
}

/** The derived id of a Python-written line (its bytes without the newline). */
// One-shot hashing (Node ≥ 20.12) is about 1.5× faster than createHash for memoir-sized lines.
const sha256: (data: string | Uint8Array) => Buffer =
  typeof (nodeCrypto as { hash?: unknown }).hash === 'function'
    ? (data) => (nodeCrypto as unknown as { hash(a: string, d: string | Uint8Array, o: 'buffer'): Buffer }).hash('sha256', data, 'buffer')
    : (data) => nodeCrypto.createHash('sha256').update(data).digest();

const CROCKFORD_CODES = Array.from(CROCKFORD, (c) => c.charCodeAt(0));

export function derivedId(line: string | Uint8Array, occurrence = 1): string {
  const digest = sha256(line);
  // 24 characters = 120 bits = the first 15 bytes, 5 bits at a time. Built in one go: a string
  // grown by += is a rope, and a million retained ropes cost hundreds of megabytes.
  const codes = [112, 121, 95]; // 'py_'
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < 15; i++) {
    acc = ((acc << 8) | (digest[i] as number)) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      codes.push(CROCKFORD_CODES[(acc >>> (bits - 5)) & 31] as number);
      bits -= 5;
    }
  }
  const id = String.fromCharCode(...codes);
  return occurrence > 1 ? `${id}~${occurrence}` : id;
}
