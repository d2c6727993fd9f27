import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Base64Decoder, Base64Encoder } from '../../src/tensor/base64-stream.js';
import { decodeBase64Strict } from '../../src/tensor/float-codec.js';

/** Cuts `text` at the given points (sorted, deduplicated, within bounds). */
function pieces(text: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, text.length]) {
    out.push(text.subarray(from, c));
    from = c;
  }
  return out;
}

function decodeInPieces(text: string, cuts: number[]): { bytes: Buffer; error: string | null } {
  const got: Buffer[] = [];
  const d = new Base64Decoder((b) => got.push(b));
  for (const p of pieces(Buffer.from(text, 'latin1'), cuts)) d.write(p);
  const err = d.end();
  return { bytes: Buffer.concat(got), error: err ? err.message : null };
}

/** The one-shot decoder's verdict: the bytes, or that it refuses. */
function whole(text: string): { bytes: Buffer | null } {
  try {
    return { bytes: decodeBase64Strict(text) };
  } catch {
    return { bytes: null };
  }
}

describe('Base64Decoder (base64 in pieces)', () => {
  it('gives the bytes of canonical text however it is cut', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const text = Buffer.from(bytes).toString('base64');
        const r = decodeInPieces(text, cuts);
        expect(r.error).toBeNull();
        expect(r.bytes.equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses exactly what decodeBase64Strict refuses (stray characters, padding, non-zero pad bits)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n.';
    const texts = fc.oneof(
      fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 24 }),
      // Canonical text with one character changed.
      fc
        .tuple(fc.uint8Array({ minLength: 1, maxLength: 30 }), fc.nat(), fc.constantFrom(...alphabet))
        .map(([b, i, ch]) => {
          const t = Buffer.from(b).toString('base64');
          const k = i % t.length;
          return t.slice(0, k) + ch + t.slice(k + 1);
        }),
    );
    fc.assert(
      fc.property(texts, fc.array(fc.nat(), { maxLength: 6 }), (text, cuts) => {
        const want = whole(text);
        const got = decodeInPieces(text, cuts);
        if (want.bytes === null) expect(got.error, text).not.toBeNull();
        else {
          expect(got.error, text).toBeNull();
          expect(got.bytes.equals(want.bytes)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('names the padding and the first bad character as decodeBase64Strict does', () => {
    expect(decodeInPieces('QUJD=', [2]).error).toBe('base64 text of 5 characters is not padded to a multiple of 4');
    expect(decodeInPieces('QU!DQUJD', [7]).error).toBe('not canonical base64 at character 2 ("!DQU")');
    expect(() => decodeBase64Strict('QU!DQUJD')).toThrow('not canonical base64 at character 2 ("!DQU")');
    // Cut right after it, the excerpt is what had arrived; the position is the same.
    expect(decodeInPieces('QU!DQUJD', [3]).error).toMatch(/^not canonical base64 at character 2 /);
  });
});

describe('Base64Encoder (base64 of bytes given in pieces)', () => {
  it('gives the text Buffer.toString gives for the whole', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const e = new Base64Encoder();
        const text = pieces(Buffer.from(bytes), cuts)
          .map((p) => e.write(p))
          .join('');
        expect(text + e.end()).toBe(Buffer.from(bytes).toString('base64'));
      }),
      { numRuns: 500 },
    );
  });
});
