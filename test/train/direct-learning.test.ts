import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import { directMatrix, setDirectMatrix } from '../../src/train/direct-path.js';
import type { Example } from '../../src/train/examples/types.js';
import { loraWeights } from '../../src/train/lora.js';
import { LAMBDA_GRID } from '../../src/train/linear-fit.js';
import { DEFAULT_SETTINGS, train, type TrainJob } from '../../src/train/trainer.js';
import { smallBase } from './helpers.js';

/**
 * The direct path on data whose rule the frozen random projection cannot express: a preference
 * for one word over another, with length pointing the other way. A linear model on the raw inputs
 * learns it from a few hundred pairs; "prefer the shorter" is wrong by construction.
 */
const WORDS = [
  'alpha',
  'bravo',
  'delta',
  'kilo',
  'lima',
  'oscar',
  'papa',
  'romeo',
  'sierra',
  'tango',
  'victor',
  'zulu',
];

function synthetic(n: number, seed: number): Example[] {
  const r = mulberry32(seed);
  const pick = (): string => WORDS[Math.floor(r() * WORDS.length)] as string;
  const filler = (k: number): string => Array.from({ length: k }, pick).join(' ');
  const out: Example[] = [];
  for (let i = 0; i < n; i++) {
    const k = 4 + Math.floor(r() * 6);
    // the preferred text says "please" and is the longer one; the other says "now"
    const chosen = `${filler(k)} please ${filler(3 + Math.floor(r() * 3))}`;
    const rejected = `${filler(k)} now`;
    out.push({
      kind: 'pair',
      agent: 'metis',
      entryId: `e${i}`,
      scene: `s${i}`,
      weight: 1,
      taskType: null,
      chosen,
      rejected,
      chosenBy: 'choice',
    });
  }
  return out;
}

describe('the direct path learns what the data allows', () => {
  it('a word preference against length: validation pairwise accuracy far above prefer-shorter, λ chosen on training scenes', () => {
    const { base, encode } = smallBase(1024, 8);
    const out = train(base, encode, {
      agent: 'metis',
      kind: 'bond',
      examples: synthetic(240, 3),
      frozen: [],
      settings: { ...DEFAULT_SETTINGS, epochs: 3 },
    });
    expect(out.status).toBe('trained');
    if (out.status !== 'trained') return;
    const m = out.report.metrics[0];
    expect(m?.name).toBe('pairwise_accuracy');
    const shorter = m?.baselines.find((b) => b.name === 'always_prefer_shorter')?.value ?? 1;
    expect(shorter).toBe(0);
    expect(m?.value).toBeGreaterThanOrEqual(0.95);
    expect(out.report.direct.chosenBy).toBe('cross-validation');
    expect(out.report.direct.curve.length).toBeGreaterThan(1);
  });

  it('with labels shuffled, validation accuracy stays near chance (the fit does not memorise its way to the held-out scenes)', () => {
    const { base, encode } = smallBase(1024, 8);
    const r = mulberry32(9);
    const shuffled = synthetic(240, 5).map((e) =>
      e.kind === 'pair' && r() < 0.5 ? { ...e, chosen: e.rejected, rejected: e.chosen } : e,
    );
    const out = train(base, encode, {
      agent: 'metis',
      kind: 'bond',
      examples: shuffled,
      frozen: [],
      settings: { ...DEFAULT_SETTINGS, epochs: 3 },
    });
    if (out.status !== 'trained') throw new Error(out.reason);
    expect(out.report.metrics[0]?.value).toBeLessThan(0.75);
  });

  it('patience is a setting: with patience 1 the nonlinear path stops after one epoch without a better stopping-scene accuracy', () => {
    const { base, encode } = smallBase(1024, 8);
    const out = train(base, encode, {
      agent: 'metis',
      kind: 'bond',
      examples: synthetic(120, 4),
      frozen: [],
      settings: { ...DEFAULT_SETTINGS, epochs: 30, patience: 1 },
    });
    if (out.status !== 'trained') throw new Error(out.reason);
    expect(out.report.epochs).toBeLessThanOrEqual(out.report.bestEpoch + 1);
    expect(out.report.stoppedEarly || out.report.epochs === 30).toBe(true);
  });

  it('a fixed l2 skips cross-validation', () => {
    const { base, encode } = smallBase(256, 8);
    const out = train(base, encode, {
      agent: 'metis',
      kind: 'bond',
      examples: synthetic(60, 6),
      frozen: [],
      settings: { ...DEFAULT_SETTINGS, epochs: 0, l2: 0.01 },
    });
    if (out.status !== 'trained') throw new Error(out.reason);
    expect(out.report.direct).toEqual({
      lambda: 0.01,
      hold: 'none',
      chosenBy: 'setting',
      curve: [],
      digest: null,
      reused: false,
    });
  });
});

describe('a λ chosen earlier is reused only on the data it was chosen on', () => {
  const job = (examples: Example[], lambdaCache: TrainJob['lambdaCache'] = null): TrainJob => ({
    agent: 'metis',
    kind: 'bond',
    examples,
    frozen: [],
    settings: { ...DEFAULT_SETTINGS, epochs: 2 },
    lambdaCache,
  });
  const bits = (a: Float64Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

  it('the same data: no second cross-validation, and the adapter bit for bit the one a fresh choice gives', () => {
    const { base, encode } = smallBase(512, 8);
    const data = synthetic(120, 7);
    const first = train(base, encode, job(data));
    if (first.status !== 'trained') throw new Error(first.reason);
    const d = first.report.direct;
    expect(d).toMatchObject({ chosenBy: 'cross-validation', reused: false });
    expect(d.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const again = train(base, encode, job(data, { digest: d.digest!, lambda: d.lambda, hold: d.hold, curve: d.curve }));
    if (again.status !== 'trained') throw new Error(again.reason);
    expect(again.report.direct).toEqual({ ...d, reused: true });
    expect(bits(again.lora.all).equals(bits(first.lora.all))).toBe(true);
    expect(again.report.metrics).toEqual(first.report.metrics);
  });

  it('the recorded λ is what a matching digest applies (nothing is recomputed), and a digest that differs is ignored', () => {
    const { base, encode } = smallBase(512, 8);
    const data = synthetic(120, 7);
    const first = train(base, encode, job(data));
    if (first.status !== 'trained') throw new Error(first.reason);
    const { digest, lambda } = first.report.direct;
    const other = LAMBDA_GRID.find((l) => l !== lambda)!;
    const forced = train(
      base,
      encode,
      job(data, { digest: digest!, lambda: other, hold: first.report.direct.hold, curve: [] }),
    );
    if (forced.status !== 'trained') throw new Error(forced.reason);
    expect(forced.report.direct).toMatchObject({ lambda: other, reused: true });
    expect(bits(forced.lora.all).equals(bits(first.lora.all))).toBe(false);
    const stale = train(
      base,
      encode,
      job(data, { digest: `sha256:${'0'.repeat(64)}`, lambda: other, hold: 'none', curve: [] }),
    );
    if (stale.status !== 'trained') throw new Error(stale.reason);
    expect(stale.report.direct).toMatchObject({ lambda, reused: false, digest });
    expect(bits(stale.lora.all).equals(bits(first.lora.all))).toBe(true);
  });

  it('other training data: another digest, cross-validated again', () => {
    const { base, encode } = smallBase(512, 8);
    const first = train(base, encode, job(synthetic(120, 7)));
    if (first.status !== 'trained') throw new Error(first.reason);
    const d = first.report.direct;
    const more = train(
      base,
      encode,
      job(synthetic(120, 8), {
        digest: d.digest!,
        lambda: LAMBDA_GRID.find((l) => l !== d.lambda)!,
        hold: d.hold,
        curve: [],
      }),
    );
    if (more.status !== 'trained') throw new Error(more.reason);
    expect(more.report.direct.reused).toBe(false);
    expect(more.report.direct.digest).not.toBe(d.digest);
    expect(more.report.direct.curve.length).toBeGreaterThan(1);
  });
});

/**
 * Pairs whose rule is only visible against the prompt: both answers have the same length and
 * shape and draw on the same vocabulary; the preferred one takes up the request (the prompt's last
 * paragraph), the other repeats the earlier context. The words change every scene, so no n-gram
 * carries the rule.
 */
function answersTheRequest(n: number, seed: number, withPrompt: boolean): Example[] {
  const r = mulberry32(seed);
  const word = (): string => Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('');
  const out: Example[] = [];
  for (let i = 0; i < n; i++) {
    const ctxWords = Array.from({ length: 4 }, word);
    const reqWords = Array.from({ length: 4 }, word);
    const prompt = `Earlier: ${ctxWords.join(' ')}.\n\nNow: ${reqWords.join(' ')}?`;
    out.push({
      kind: 'pair',
      agent: 'metis',
      entryId: `e${i}`,
      scene: `s${i}`,
      weight: 1,
      taskType: null,
      chosen: `Here: ${reqWords.slice(0, 3).join(' ')}.`,
      rejected: `Here: ${ctxWords.slice(0, 3).join(' ')}.`,
      chosenBy: 'choice',
      ...(withPrompt ? { prompt } : {}),
    });
  }
  return out;
}

describe('the direct path sees how an answer relates to the prompt', () => {
  const run = (withPrompt: boolean): number => {
    const { base, encode } = smallBase(1024, 8);
    const out = train(base, encode, {
      agent: 'metis',
      kind: 'bond',
      examples: answersTheRequest(240, 4, withPrompt),
      frozen: [],
      settings: { ...DEFAULT_SETTINGS, epochs: 2 },
    });
    if (out.status !== 'trained') throw new Error(out.reason);
    return out.report.metrics[0]?.value ?? NaN;
  };

  it('answering the request rather than repeating the context: learned with the prompt, chance without it', () => {
    expect(run(true)).toBeGreaterThanOrEqual(0.95);
    expect(run(false)).toBeLessThan(0.75);
  });
});

describe('the direct path as LoRA factors', () => {
  const dims = (out: number, rank: number): { inDim: number; hidden: number; out: number; rank: number } => ({
    inDim: 40,
    hidden: 4,
    out,
    rank,
  });
  const matrix = (out: number, seed: number): Float64Array => {
    const r = mulberry32(seed);
    return Float64Array.from({ length: out * 40 }, () => r() * 2 - 1);
  };
  for (const [out, rank] of [
    [1, 8],
    [7, 8],
  ] as const) {
    it(`out ${out}, rank ${rank}: s·B·A is the fitted matrix exactly, and B is the identity (factor averages are model averages)`, () => {
      const l = loraWeights(dims(out, rank));
      const W = matrix(out, out);
      setDirectMatrix(l, W, 2);
      const back = directMatrix(l, 2);
      for (let i = 0; i < W.length; i++) expect(back[i]).toBeCloseTo(W[i] as number, 12);
      for (let o = 0; o < out; o++)
        for (let i = 0; i < rank; i++) expect(l.directB[o * rank + i]).toBe(o === i ? 1 : 0);
    });
  }

  it('out 7, rank 3: the best rank-3 approximation (its error is the sum of the dropped eigenvalues)', () => {
    const l = loraWeights(dims(7, 3));
    const W = matrix(7, 11);
    setDirectMatrix(l, W, 1);
    const back = directMatrix(l, 1);
    let err = 0;
    let total = 0;
    for (let i = 0; i < W.length; i++) {
      err += ((back[i] as number) - (W[i] as number)) ** 2;
      total += (W[i] as number) ** 2;
    }
    expect(err).toBeGreaterThan(0);
    expect(err).toBeLessThan(total * 0.75);
  });
});
