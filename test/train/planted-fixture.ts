import { mulberry32 } from '../../src/runtime/seeded-random.js';
import type { Example } from '../../src/train/examples/types.js';

/**
 * A small planted-preference fixture for the trainer's own tests (the sample generator's
 * catalogue is learndata's; this one only has to be a pattern of form over words that change).
 * Identifiers are pseudo-words from two disjoint vocabularies: `train` and `heldout`.
 */
const SYL = [
  'ka',
  'lo',
  'mi',
  'ru',
  'te',
  'sa',
  'no',
  'vi',
  'du',
  'pe',
  'zo',
  'ha',
  'fi',
  'gu',
  'be',
  'ri',
  'to',
  'ma',
  'ne',
  'xu',
  'jo',
  'we',
  'ly',
  'qua',
];

export function vocabularies(seed = 1, n = 300): { train: string[]; heldout: string[] } {
  const r = mulberry32(seed);
  const words = new Set<string>();
  while (words.size < 2 * n) {
    const k = 2 + Math.floor(r() * 2);
    let w = '';
    for (let i = 0; i < k; i++) w += SYL[Math.floor(r() * SYL.length)];
    words.add(w);
  }
  const all = [...words];
  return { train: all.slice(0, n), heldout: all.slice(n) };
}

type Render = (w: () => string, r: () => number) => { preferred: string; dispreferred: string };

const camel = (a: string, b: string): string => a + b[0]!.toUpperCase() + b.slice(1);

export const PREFERENCES: Record<string, Render> = {
  // Early returns (guard clauses) over nested ifs.
  early_returns: (w, r) => {
    const [f, a, b, c, g, h] = [camel(w(), w()), w(), w(), w(), w(), w()];
    const cond = r() < 0.5 ? `${a}.${h}` : `${a} === null`;
    const neg = cond.includes('===') ? `${a} !== null` : `!${a}.${h}`;
    const body =
      r() < 0.5 ? [`const ${c} = ${g}(${a});`, `return ${c}.${h}(${b});`] : [`${g}(${a}, ${b});`, `return ${b};`];
    return {
      preferred: [`function ${f}(${a}, ${b}) {`, `  if (${neg}) return ${b};`, ...body.map((l) => `  ${l}`), '}'].join(
        '\n',
      ),
      dispreferred: [
        `function ${f}(${a}, ${b}) {`,
        `  if (${cond}) {`,
        ...body.map((l) => `    ${l}`),
        '  } else {',
        `    return ${b};`,
        '  }',
        '}',
      ].join('\n'),
    };
  },
  // Type annotations on every signature.
  type_annotations: (w, r) => {
    const [f, a, b, c] = [camel(w(), w()), w(), w(), w()];
    const ta = ['string', 'number', 'boolean'][Math.floor(r() * 3)]!;
    const tb = ['string[]', 'number', 'Map<string, number>'][Math.floor(r() * 3)]!;
    const body = `  const ${c} = ${a}.${w()}(${b});\n  return ${c};`;
    return {
      preferred: `function ${f}(${a}: ${ta}, ${b}: ${tb}): ${ta} {\n${body}\n}`,
      dispreferred: `function ${f}(${a}, ${b}) {\n${body}\n}`,
    };
  },
};

export function plantedPairs(
  pref: keyof typeof PREFERENCES,
  opts: { seed: number; n: number; vocab: string[] },
): { preferred: string; dispreferred: string }[] {
  const r = mulberry32(opts.seed);
  const w = (): string => opts.vocab[Math.floor(r() * opts.vocab.length)]!;
  return Array.from({ length: opts.n }, () => PREFERENCES[pref]!(w, r));
}

/** Training pairs as examples, two per scene. `shuffle` swaps chosen/rejected at random (no signal). */
export function plantedExamples(
  pref: keyof typeof PREFERENCES,
  opts: { seed: number; n: number; vocab: string[]; shuffle?: boolean },
): Example[] {
  const r = mulberry32(opts.seed ^ 0x5bd1e995);
  return plantedPairs(pref, opts).map((p, i) => {
    const swap = opts.shuffle === true && r() < 0.5;
    return {
      agent: 'techne',
      entryId: `e${i}`,
      scene: `session-1.turn-${Math.floor(i / 2)}`,
      weight: 1,
      taskType: 'code',
      kind: 'pair',
      chosen: swap ? p.dispreferred : p.preferred,
      rejected: swap ? p.preferred : p.dispreferred,
      chosenBy: 'choice',
    };
  });
}
