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

/** Two Crockford characters for each 10-bit value. */
const PAIRS = Array.from({ length: 1024 }, (_, i) => (CROCKFORD[i >> 5] as string) + (CROCKFORD[i & 31] as string));
const TWO_40 = 2 ** 40;
const TWO_30 = 2 ** 30;

/** 40 bits (an integer below 2^40, exact in a double) as 8 base32 characters. */
function encode40(x: number): string {
  const top = Math.floor(x / TWO_30);
  const low = x - top * TWO_30;
  return (
    (PAIRS[top] as string) +
    (PAIRS[(low >>> 20) & 1023] as string) +
    (PAIRS[(low >>> 10) & 1023] as string) +
    (PAIRS[low & 1023] as string)
  );
}

const from5Bytes = (b: Uint8Array, at: number): number =>
  (b[at] ?? 0) * 2 ** 32 +
  (((b[at + 1] ?? 0) << 24) >>> 0) +
  ((b[at + 2] ?? 0) << 16) +
  ((b[at + 3] ?? 0) << 8) +
  (b[at + 4] ?? 0);

export interface IdSource {
  next(): string;
}

/**
 * A monotonic ULID generator: ids from one generator always sort in creation order. Within one
 * millisecond the 80 random bits are incremented (kept as two 40-bit halves), and the time part,
 * encoded once per millisecond, is reused: an id costs a few string joins (append makes 10k a batch).
 */
export function ulidGenerator(now: () => number, random: (n: number) => Uint8Array): IdSource {
  let lastMs = -1;
  let timePart = '';
  let hi = 0;
  let lo = 0;
  return {
    next() {
      const ms = now();
      if (ms <= lastMs) {
        if (++lo === TWO_40) {
          lo = 0;
          if (++hi === TWO_40) throw new RangeError('ULID random component overflowed within one millisecond');
        }
      } else {
        lastMs = ms;
        timePart = encodeTime(ms);
        const r = random(10);
        hi = from5Bytes(r, 0);
        lo = from5Bytes(r, 5);
      }
      return timePart + encode40(hi) + encode40(lo);
    },
  };
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
    ? (data) =>
        (nodeCrypto as unknown as { hash(a: string, d: string | Uint8Array, o: 'buffer'): Buffer }).hash(
          'sha256',
          data,
          'buffer',
        )
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
