/**
 * How far a council adapter is applied for this player: the lean (0 bond only … 1 council only)
 * chosen on the player's held-out validation examples, overall and per task type. A candidate
 * replaces the baseline (bond only) only when it is right on clearly more of the same examples
 * than the baseline is (a one-sided sign test at 5% on the examples where they differ), so a council adapter that is mostly noise
 * is not applied: a round never makes the forge worse on what can be measured.
 *
 * Generic over the model: `judge(lean)` says, per example, whether the network the trainer built
 * gets it right at that lean (validation.ts builds it from Inference).
 */
export const CANDIDATE_LEANS: readonly number[] = [0, 0.25, 0.5, 0.75, 1];

/** Fewer examples of a task type than this and it follows the agent-wide choice. */
export const MIN_TASK_TYPE_EXAMPLES = 12;

/** Level of the one-sided test a candidate must pass against the baseline. */
const ALPHA = 0.05;

export interface LeanScore {
  lean: number;
  /** Share of the examples right (pairs ordered the player's way, routes to the right specialist). */
  accuracy: number;
}

export interface LeanDecision {
  lean: number;
  examples: number;
  /** The lean the candidates had to beat. */
  baseline: number;
  scores: LeanScore[];
  /** Why this lean: it beat the baseline, nothing beat it, or too few examples to tell (inherited). */
  reason: 'better' | 'not_better' | 'too_few';
}

export interface LeanChoice {
  overall: LeanDecision;
  byTaskType: Record<string, LeanDecision>;
}

/** Per candidate lean, one flag per example (the same examples, in the same order, for every lean). */
export type Judge = (lean: number) => ArrayLike<boolean>;

function accuracy(right: ArrayLike<boolean>, idx: readonly number[]): number {
  if (idx.length === 0) return 0;
  let n = 0;
  for (const i of idx) if (right[i]) n++;
  return n / idx.length;
}

/** Wins and losses of `c` against `b` on the examples `idx`. */
function paired(
  c: ArrayLike<boolean>,
  b: ArrayLike<boolean>,
  idx: readonly number[],
): { wins: number; losses: number } {
  let wins = 0;
  let losses = 0;
  for (const i of idx) {
    if (c[i] && !b[i]) wins++;
    else if (b[i] && !c[i]) losses++;
  }
  return { wins, losses };
}

/** P(X ≥ k) for X ~ Binomial(n, 1/2). */
export function signTail(k: number, n: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  let logC = 0; // log C(n, i), built up from i = 0
  let p = 0;
  for (let i = 0; i <= n; i++) {
    if (i > 0) logC += Math.log((n - i + 1) / i);
    if (i >= k) p += Math.exp(logC - n * Math.LN2);
  }
  return Math.min(1, p);
}

/** True when the candidate's wins over the baseline are beyond what a fair coin over the discordant examples gives (sign test). */
export function clearlyBetter(wins: number, losses: number): boolean {
  return wins > losses && signTail(wins, wins + losses) <= ALPHA;
}

function decide(
  results: ReadonlyMap<number, ArrayLike<boolean>>,
  idx: readonly number[],
  baseline: number,
): LeanDecision {
  const scores = [...results].map(([lean, right]) => ({ lean, accuracy: accuracy(right, idx) }));
  const base = results.get(baseline) as ArrayLike<boolean>;
  let best: LeanScore | null = null;
  for (const s of scores) {
    if (s.lean === baseline) continue;
    const { wins, losses } = paired(results.get(s.lean) as ArrayLike<boolean>, base, idx);
    // Among the candidates that pass, the most accurate; ties go to the one nearer the baseline.
    if (
      clearlyBetter(wins, losses) &&
      (!best ||
        s.accuracy > best.accuracy ||
        (s.accuracy === best.accuracy && Math.abs(s.lean - baseline) < Math.abs(best.lean - baseline)))
    )
      best = s;
  }
  return {
    lean: best?.lean ?? baseline,
    examples: idx.length,
    baseline,
    scores,
    reason: best ? 'better' : 'not_better',
  };
}

export function chooseLean(
  examples: readonly { taskType: string | null }[],
  judge: Judge,
  opts: { baseline?: number; leans?: readonly number[] } = {},
): LeanChoice {
  const baseline = opts.baseline ?? 0;
  const leans = [...new Set([baseline, ...(opts.leans ?? CANDIDATE_LEANS)])].sort((a, b) => a - b);
  const results = new Map(leans.map((l) => [l, judge(l)]));
  const all = examples.map((_, i) => i);
  const overall = decide(results, all, baseline);
  const groups = new Map<string, number[]>();
  examples.forEach((e, i) => {
    if (e.taskType === null) return;
    const g = groups.get(e.taskType) ?? [];
    g.push(i);
    groups.set(e.taskType, g);
  });
  const byTaskType: Record<string, LeanDecision> = {};
  for (const [t, idx] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    byTaskType[t] =
      idx.length >= MIN_TASK_TYPE_EXAMPLES
        ? decide(results, idx, baseline)
        : { ...decide(results, idx, baseline), lean: overall.lean, reason: 'too_few' };
  }
  return { overall, byTaskType };
}

/** The lean a decision gives a task type: its own when measured, else the agent-wide one. */
export function choiceFor(c: LeanChoice, taskType: string | null): LeanDecision {
  return (taskType !== null ? c.byTaskType[taskType] : undefined) ?? c.overall;
}
