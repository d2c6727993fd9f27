import { InvalidDataError } from '../../errors.js';
import { parseLine } from '../../memoir/format/parse.js';
import type { Agent } from '../../memoir/format/agents.js';
import type { MemoirEntry } from '../../memoir/format/schema.js';
import { headOf } from '../adapter-layout.js';
import type { BaseModel } from '../base-model.js';
import { hashString } from '../encoder/hashed-ngrams.js';
import { examplesOf, fromEntry } from '../examples/build.js';
import type { Example, PairExample } from '../examples/types.js';
import { Inference } from '../inference.js';
import { train, type EncodeFn, type TrainSettings } from '../trainer.js';

/**
 * Held-out pairwise accuracy of the learned model on a converted dataset, beside the trivial
 * rules, by k-fold cross-validation over conversations inside a fixed part of the dataset (partOf):
 * every pair of the part is held out exactly once and the per-pair outcomes of the folds pool into
 * one interval. The model is trained through the real path:
 * memoir lines -> the memoir reader's parse -> the bond view's example rules (build.ts) -> train() (its own
 * train/stop/validate split inside the training part) -> Inference on the held-out scenes.
 * Nothing about the held-out scenes reaches training, λ selection or early stopping.
 */
export interface PairCase {
  scene: string;
  chosen: string;
  rejected: string;
  prompt: string | null;
  /** The entry's own text (its agent_proposed). */
  proposal: string | null;
  /** The pair lists the chosen text first. */
  chosenFirst: boolean;
}

export interface SplitFigures {
  model: number;
  rules: Record<RuleName, number>;
  /** Per held-out pair (in `testScenes` order): 1 right, 0.5 a tie, 0 wrong. */
  outcomes: { model: number[]; rules: Record<RuleName, number[]> };
  testScenes: string[];
  trainPairs: number;
  testPairs: number;
  lambda: number;
  trainSeconds: number;
}

export type RuleName = 'prefer_shorter' | 'prefer_longer' | 'prefer_proposal' | 'majority';

/** The examples and pair cases of memoir lines, for one agent (descriptions of each scene as prompts). */
export function examplesFromLines(
  lines: readonly string[],
  agent: Agent,
): { examples: Example[]; cases: Map<string, PairCase> } {
  // Through the memoir reader's own parse (entry ids derived from the line, as for any Python line).
  const seen = new Map<string, number>();
  const entries: MemoirEntry[] = lines.map((l, i) => {
    const r = parseLine(l, (id) => {
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      return n;
    });
    if (!r.ok) throw new InvalidDataError(`converted line ${i + 1} is not a memoir entry: ${r.message}`);
    return r.entry;
  });
  const described = new Map<string, string>();
  for (const e of entries)
    if (e.source === 'task_description' && e.agent_proposed) described.set(e.scene_id, e.agent_proposed);
  const examples: Example[] = [];
  const cases = new Map<string, PairCase>();
  const skip = (): void => undefined;
  for (const e of entries) {
    if (e.agent !== agent) continue;
    const fields = fromEntry(e, described.get(e.scene_id) ?? null);
    const ex = examplesOf(fields, skip);
    examples.push(...ex);
    const pair = ex.find((x): x is PairExample => x.kind === 'pair');
    if (pair) {
      const pp = e.training_label?.preference_pair ?? [];
      cases.set(e.scene_id, {
        scene: e.scene_id,
        chosen: pair.chosen,
        rejected: pair.rejected,
        prompt: pair.prompt ?? null,
        proposal: e.agent_proposed,
        chosenFirst: pp[0]?.text === pair.chosen,
      });
    }
  }
  return { examples, cases };
}

/**
 * What groups pairs: the conversation they answer (the prompt), else the text being revised (the
 * proposal), else the scene. Pairs of one group always share a part and a fold, so a conversation
 * asked twice is never trained on and tested on at once.
 */
export function groupOf(c: PairCase): string {
  return c.prompt ?? c.proposal ?? c.scene;
}

/**
 * The fold (0 … folds − 1) a group is held out in: a fixed hash of its key. Another `seed` draws
 * another partition of the same groups (repeated cross-validation); seed 0 is the default one.
 */
export function foldOf(key: string, folds: number, seed = 0): number {
  return hashString(seed === 0 ? key : `${seed}\u0000${key}`, 0x7e57) % folds;
}

/**
 * The evaluation protocol's two parts of a dataset, by a fixed hash of each pair's group:
 * `development` (DEVELOPMENT_PERCENT of the groups), where every design choice is made by
 * cross-validation inside it, and `report`, measured only with a finished configuration.
 */
export type Part = 'development' | 'report';
export const DEVELOPMENT_PERCENT = 40;

export function partOf(c: PairCase): Part {
  return hashString(groupOf(c), 0xd3e1) % 100 < DEVELOPMENT_PERCENT ? 'development' : 'report';
}

/** One fold: the scenes trained on and the scenes held out. */
export interface Fold {
  train: ReadonlySet<string>;
  test: ReadonlySet<string>;
}

/**
 * The k folds measuring a part. `development`: k-fold inside the development part only.
 * `report`: each report pair held out once, trained on the development part and the other report
 * folds. `all`: k-fold over every pair (no part kept back). `seed` picks the partition (foldOf);
 * the parts never depend on it.
 */
export function partFolds(cases: Iterable<PairCase>, part: Part | 'all', folds: number, seed = 0): Fold[] {
  const out = Array.from({ length: folds }, () => ({ train: new Set<string>(), test: new Set<string>() }));
  for (const c of cases) {
    const p = partOf(c);
    if (part === 'development' && p !== 'development') continue;
    const f = foldOf(groupOf(c), folds, seed);
    out.forEach((fold, k) => (k === f && (part === 'all' || p === part) ? fold.test : fold.train).add(c.scene));
  }
  return out;
}

const outcome = (m: number): number => (m > 0 ? 1 : m === 0 ? 0.5 : 0);

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

/** The trivial rules' outcome on each test case (majority: the list position that won more often in training). */
export function trivialRules(trainCases: readonly PairCase[], test: readonly PairCase[]): Record<RuleName, number[]> {
  const firstWins = trainCases.filter((c) => c.chosenFirst).length;
  const majorityFirst = firstWins * 2 >= trainCases.length;
  return {
    prefer_shorter: test.map((c) => outcome(c.rejected.length - c.chosen.length)),
    prefer_longer: test.map((c) => outcome(c.chosen.length - c.rejected.length)),
    prefer_proposal: test.map((c) => outcome(c.proposal === c.chosen ? 1 : c.proposal === c.rejected ? -1 : 0)),
    majority: test.map((c) => outcome(c.chosenFirst === majorityFirst ? 1 : -1)),
  };
}

export interface EvalOptions {
  base: BaseModel;
  encode: EncodeFn;
  agent: Agent;
  settings: TrainSettings;
}

/** Trains on `fold.train`'s scenes and measures `fold.test`'s pairs; `n` varies the seed per fold. */
export function evaluateSplit(
  examples: readonly Example[],
  cases: ReadonlyMap<string, PairCase>,
  o: EvalOptions,
  fold: Fold,
  n: number,
): SplitFigures {
  const trainEx = examples.filter((e) => fold.train.has(e.scene));
  const test = [...cases.values()].filter((c) => fold.test.has(c.scene));
  const trainCases = [...cases.values()].filter((c) => fold.train.has(c.scene));
  const t0 = performance.now();
  const out = train(o.base, o.encode, {
    agent: o.agent,
    kind: 'bond',
    examples: trainEx,
    frozen: [],
    settings: { ...o.settings, seed: o.settings.seed + n },
  });
  const trainSeconds = (performance.now() - t0) / 1000;
  if (out.status !== 'trained') throw new Error(`training was skipped: ${out.reason}`);
  const inf = new Inference({
    agent: o.agent,
    head: headOf(o.agent),
    base: o.base,
    council: null,
    bond: { lora: out.lora, alpha: o.settings.alpha, version: 0 },
  });
  const margins = test.map((c) => {
    const [a, b] = inf.outputs([o.encode(c.chosen, c.prompt), o.encode(c.rejected, c.prompt)], 0);
    return ((a as Float64Array)[0] as number) - ((b as Float64Array)[0] as number);
  });
  const model = margins.map(outcome);
  const rules = trivialRules(trainCases, test);
  return {
    model: mean(model),
    rules: Object.fromEntries(Object.entries(rules).map(([k, v]) => [k, mean(v)])) as Record<RuleName, number>,
    outcomes: { model, rules },
    testScenes: test.map((c) => c.scene),
    trainPairs: trainCases.length,
    testPairs: test.length,
    lambda: out.report.direct.lambda,
    trainSeconds,
  };
}

/**
 * Mean and 95% interval of per-pair outcomes pooled over the folds (each pair held out once):
 * the normal interval of a mean, so a difference of two rules' outcomes on the same pairs gives
 * the paired interval of their gap.
 */
export function pooledInterval(xs: readonly number[]): { mean: number; lo: number; hi: number } {
  const n = xs.length;
  const m = mean(xs);
  if (n < 2) return { mean: m, lo: m, hi: m };
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (n - 1));
  const h = (1.96 * sd) / Math.sqrt(n);
  return { mean: m, lo: m - h, hi: m + h };
}

/** Per-pair differences a − b of two outcome lists over the same pairs. */
export function pairedGap(a: readonly number[], b: readonly number[]): number[] {
  return a.map((x, i) => x - (b[i] as number));
}

/** Mean and 95% interval (Student t over the splits) of per-split figures. */
export function interval(xs: readonly number[]): { mean: number; lo: number; hi: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, lo: mean, hi: mean };
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  const T = [
    12.71, 4.3, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.2, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11, 2.1, 2.09,
  ];
  const t = T[n - 2] ?? 1.96;
  const h = (t * sd) / Math.sqrt(n);
  return { mean, lo: mean - h, hi: mean + h };
}
