import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonBodyError, JsonBodyParser } from '../../src/council/body-json.js';

/**
 * The streaming JSON reader builds what JSON.parse builds, with tensors[i].data strings handed out
 * as they arrive (and "" left in their place), wherever the body is cut into pieces.
 */
function parseInPieces(text: string, cuts: number[]): { doc: unknown; data: Map<number, string>; order: number[] } {
  const bytes = Buffer.from(text, 'utf8');
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const data = new Map<number, string>();
  const order: number[] = [];
  let current = -1;
  const p = new JsonBodyParser({
    dataStart: (i) => {
      current = i;
      data.set(i, '');
    },
    data: (chars) => data.set(current, (data.get(current) ?? '') + chars.toString('utf8')),
    dataEnd: (i) => order.push(i),
    tensorEnd: () => undefined,
  });
  let from = 0;
  for (const c of [...at, bytes.length]) {
    p.write(bytes.subarray(from, c));
    from = c;
  }
  return { doc: p.end(), data, order };
}

/** What the reader must give: JSON.parse's document with the data strings blanked, and those strings. */
function expected(text: string): { doc: unknown; data: Map<number, string> } {
  const doc = JSON.parse(text) as unknown;
  const data = new Map<number, string>();
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
    const tensors = (doc as { tensors?: unknown }).tensors;
    if (Array.isArray(tensors))
      tensors.forEach((t: unknown, i) => {
        if (t && typeof t === 'object' && !Array.isArray(t) && typeof (t as { data?: unknown }).data === 'string') {
          data.set(i, (t as { data: string }).data);
          (t as { data: string }).data = '';
        }
      });
  }
  return { doc, data };
}

/** Whether a JSON text names a "__proto__" key anywhere: the reader refuses those (tested below). */
const namesProto = (text: string): boolean => text.includes('"__proto__"');

const tensor = fc.record(
  {
    name: fc.string({ maxLength: 8 }),
    shape: fc.array(fc.integer({ min: -3, max: 40 }), { maxLength: 3 }),
    dtype: fc.constantFrom('F32', 'F64'),
    data: fc.oneof(fc.base64String({ maxLength: 40 }), fc.string({ maxLength: 6 }), fc.integer()),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);
const bodyDoc = fc.record(
  {
    base_fingerprint: fc.string({ maxLength: 10 }),
    privacy: fc.record({ clip_norm: fc.double({ noNaN: true, noDefaultInfinity: true }), noise_multiplier: fc.nat() }),
    weight: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)),
    tensors: fc.array(tensor, { maxLength: 4 }),
    other: fc.jsonValue({ maxDepth: 3 }),
  },
  { requiredKeys: ['tensors'] },
);

describe('JsonBodyParser', () => {
  it('gives JSON.parse’s document and every tensor’s data, however the body is cut and spaced', () => {
    fc.assert(
      fc.property(bodyDoc, fc.array(fc.nat(), { maxLength: 10 }), fc.boolean(), (d, cuts, spaced) => {
        const text = JSON.stringify(d, null, spaced ? 2 : undefined);
        fc.pre(!namesProto(text));
        const want = expected(text);
        const got = parseInPieces(text, cuts);
        expect(got.doc).toEqual(want.doc);
        expect(got.data).toEqual(want.data);
      }),
      { numRuns: 400 },
    );
  });

  it('resolves escapes inside a data string, even cut in the middle of one', () => {
    const text = '{"tensors":[{"name":"a","data":"QU\\/D\\u0041A=="}]}';
    for (let cut = 0; cut <= text.length; cut++)
      expect(parseInPieces(text, [cut]).data.get(0), `cut at ${cut}`).toBe('QU/DAA==');
  });

  it('refuses what JSON.parse refuses, and a "__proto__" key', () => {
    for (const bad of [
      '{"tensors":[}',
      '{"a":1,}',
      '[1,]',
      '{"a" 1}',
      '{"a":tru}',
      '{"a":1}}',
      '{"a":1} x',
      '{"tensors":[{"data":"abc',
      '{"a":"\u0001"}',
      '{"__proto__":{"x":1}}',
    ]) {
      expect(() => parseInPieces(bad, []), bad).toThrow(JsonBodyError);
    }
  });
});
