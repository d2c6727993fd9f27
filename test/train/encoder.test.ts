import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HashedEncoder, normalisedTokens, wordShape } from '../../src/train/encoder/hashed-ngrams.js';
import type { Features } from '../../src/train/features.js';
import { rawStructure, STRUCTURE_FEATURES } from '../../src/train/encoder/structure.js';

function cosine(a: Features, b: Features): number {
  const m = new Map<number, number>();
  a.idx.forEach((j, k) => m.set(j, a.val[k]!));
  let s = 0;
  b.idx.forEach((j, k) => (s += (m.get(j) ?? 0) * b.val[k]!));
  return s;
}

describe('hashed n-gram encoder', () => {
  const enc = new HashedEncoder(1 << 14);

  it('words become shapes; keywords stay; indentation is a token', () => {
    expect(wordShape('entryCount')).toBe('xXx:9+');
    expect(wordShape('ABC')).toBe('X:2-4');
    expect(wordShape('x')).toBe('x:1');
    expect(wordShape('max_len')).toBe('x_x:5-8');
    expect(wordShape('HTTP2')).toBe('X9:5-8');
    expect(wordShape('café')).toBe('x:2-4');
    expect(normalisedTokens('if (!ok) return;\n    run(x);')).toEqual([
      'if',
      '(',
      '!',
      'x:2-4',
      ')',
      'return',
      ';',
      'nl:2',
      'x:2-4',
      '(',
      'x:1',
      ')',
      ';',
    ]);
    expect(normalisedTokens('feat: 3.5 🔥')).toEqual(['feat', ':', 'num', '🔥']);
  });

  it('is L2-normalised with ascending indices, and deterministic', () => {
    const f = enc.encode('function kaloMiru(ka, lo) {\n  if (!ka) return lo;\n}');
    let s = 0;
    for (const v of f.val) s += v * v;
    expect(s).toBeCloseTo(1, 12);
    for (let k = 1; k < f.idx.length; k++) expect(f.idx[k]!).toBeGreaterThan(f.idx[k - 1]!);
    const g = new HashedEncoder(1 << 14).encode('function kaloMiru(ka, lo) {\n  if (!ka) return lo;\n}');
    expect(Array.from(g.idx)).toEqual(Array.from(f.idx));
    expect(Array.from(g.val)).toEqual(Array.from(f.val));
  });

  it('pins version 1 of the features (changing the encoder must change the base spec version)', () => {
    const texts = [
      '',
      'x',
      'def load(path):\n    with open(path) as f:\n        return [json.loads(l) for l in f]',
      'fix(index): rebuild when a file shrinks 🔥',
      'naming: `tmp2` — café-grade names only',
    ];
    const h = createHash('sha256');
    for (const t of texts) {
      const f = enc.encode(t);
      h.update(Buffer.from(f.idx.buffer));
      h.update(Buffer.from(f.val.buffer));
    }
    expect(h.digest('hex')).toMatchInlineSnapshot(`"61de3f5a4943ae7fa186cf283115e2b44f5a8dfb1e1c9670b15dac84efbf5551"`);
  });

  it('the same form with unseen words stays close; a different form does not', () => {
    const early = (f: string, a: string, b: string): string =>
      `function ${f}(${a}, ${b}) {\n  if (!${a}) return ${b};\n  return ${a}.${b};\n}`;
    const nested = (f: string, a: string, b: string): string =>
      `function ${f}(${a}, ${b}) {\n  if (${a}) {\n    return ${a}.${b};\n  } else {\n    return ${b};\n  }\n}`;
    const e1 = enc.encode(early('kaloMiru', 'teso', 'vani'));
    const e2 = enc.encode(early('dupeZofa', 'hulo', 'rixe'));
    const n2 = enc.encode(nested('dupeZofa', 'hulo', 'rixe'));
    expect(cosine(e1, e2)).toBeGreaterThan(0.6);
    expect(cosine(e1, e2)).toBeGreaterThan(cosine(e2, n2) + 0.1);
  });

  it('empty and whitespace-only texts encode to the length feature only', () => {
    expect(enc.encode('').idx.length).toBe(1);
    expect(enc.encode(' \n\t ').idx.length).toBeGreaterThan(0);
  });
});

describe('structure features that relate an answer to its prompt', () => {
  const prompt = 'Human: hello there friend\n\nAssistant: hello\n\nHuman: how to boil eggs';
  const k = (name: (typeof STRUCTURE_FEATURES)[number]): number => STRUCTURE_FEATURES.indexOf(name);

  it('the request is the last paragraph, the context the paragraphs before it (hand-computed)', () => {
    // words: boil eggs for the friend; request {human, how, boil, eggs}; context {human, hello, there, friend, assistant}
    const x = rawStructure('Boil eggs for the friend?', prompt);
    expect(x[k('request_overlap')]).toBeCloseTo(2 / 5, 12);
    expect(x[k('request_coverage')]).toBeCloseTo(2 / 4, 12);
    expect(x[k('request_length_ratio')]).toBeCloseTo(Math.log(6 / 6), 12);
    expect(x[k('bigram_echo')]).toBeCloseTo(1 / 4, 12); // "boil eggs" of 4 bigrams
    expect(x[k('context_repeat')]).toBeCloseTo(1 / 5, 12); // "friend"
    expect(x[k('ends_question')]).toBe(1);
  });

  it('without a prompt the prompt features are 0; a one-paragraph prompt has no context', () => {
    const none = rawStructure('Boil eggs for the friend.', null);
    for (const f of ['request_overlap', 'request_coverage', 'bigram_echo', 'context_repeat', 'ends_question'] as const)
      expect(none[k(f)]).toBe(0);
    const one = rawStructure('Boil eggs for the friend.', 'how to boil eggs');
    expect(one[k('request_overlap')]).toBeCloseTo(2 / 5, 12);
    expect(one[k('context_repeat')]).toBe(0);
  });
});
