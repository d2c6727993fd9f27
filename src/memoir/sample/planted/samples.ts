import type { Agent } from '../../format/agents.js';
import { AXIS_INFO, type Axis } from './catalogue.js';
import { between, type Rand, type Vocabulary } from './pseudo-words.js';
import { codeContent, CODE_VARIANTS, renderCode, renderTest, testContent, TEST_VARIANTS } from './render-code.js';
import {
  citationContent,
  CITATION_VARIANTS,
  commitContent,
  COMMIT_VARIANTS,
  planContent,
  PLAN_VARIANTS,
  renderCitation,
  renderCommit,
  renderPlan,
} from './render-text.js';
import type { Style, VariantCounts } from './style.js';

/**
 * Sample kinds: what a specialist writes (code, a test, a commit message, a plan, a correction),
 * as content plus a style. One table says which agent writes each kind and which axes it shows.
 */

export const SAMPLE_KINDS = ['code', 'test', 'commit', 'plan', 'citation'] as const;
export type SampleKind = (typeof SAMPLE_KINDS)[number];

interface KindInfo {
  agent: Agent;
  variants: VariantCounts;
  content: (rand: Rand, vocab: Vocabulary) => unknown;
  render: (content: never, style: Style) => string;
}

export const KIND_INFO: Readonly<Record<SampleKind, KindInfo>> = {
  code: { agent: 'techne', variants: CODE_VARIANTS, content: codeContent, render: renderCode },
  test: { agent: 'dokimasia', variants: TEST_VARIANTS, content: testContent, render: renderTest },
  commit: { agent: 'mneme', variants: COMMIT_VARIANTS, content: commitContent, render: renderCommit },
  plan: { agent: 'metis', variants: PLAN_VARIANTS, content: planContent, render: renderPlan },
  citation: { agent: 'aletheia', variants: CITATION_VARIANTS, content: citationContent, render: renderCitation },
};

export interface Sample {
  kind: SampleKind;
  content: unknown;
}

export function newSample(rand: Rand, kind: SampleKind, vocab: Vocabulary): Sample {
  return { kind, content: KIND_INFO[kind].content(rand, vocab) };
}

export function render(sample: Sample, style: Style): string {
  return KIND_INFO[sample.kind].render(sample.content as never, style);
}

export function axesOf(kind: SampleKind): Axis[] {
  return Object.keys(KIND_INFO[kind].variants) as Axis[];
}

/** The sample kind whose outputs show an axis, for one of the axis's agents. */
export function kindFor(axis: Axis, agent: Agent): SampleKind {
  const k = (Object.keys(KIND_INFO) as SampleKind[]).find(
    (kind) => KIND_INFO[kind].agent === agent && axis in KIND_INFO[kind].variants,
  );
  if (!k) throw new RangeError(`no sample kind shows ${axis} for ${agent}`);
  return k;
}

/** A style with a random pole and variant on every axis the kind shows. */
export function randomStyle(rand: Rand, kind: SampleKind): Style {
  const s: Style = {};
  for (const [axis, counts] of Object.entries(KIND_INFO[kind].variants) as [Axis, readonly [number, number]][]) {
    const pole: 0 | 1 = rand() < 0.5 ? 0 : 1;
    s[axis] = { pole, variant: between(rand, 0, counts[pole] - 1) };
  }
  return s;
}

/** `base` with these axes set to these poles, each with a random variant. */
export function withPoles(rand: Rand, kind: SampleKind, base: Style, poles: Partial<Record<Axis, 0 | 1>>): Style {
  const s: Style = { ...base };
  for (const [axis, pole] of Object.entries(poles) as [Axis, 0 | 1][]) {
    const counts = KIND_INFO[kind].variants[axis];
    if (!counts) continue;
    s[axis] = { pole, variant: between(rand, 0, counts[pole] - 1) };
  }
  return s;
}

function rerollVariants(rand: Rand, kind: SampleKind, style: Style, axes: readonly Axis[]): Style {
  const s: Style = { ...style };
  for (const axis of axes) {
    const cur = s[axis];
    const counts = KIND_INFO[kind].variants[axis];
    if (!cur || !counts) continue;
    s[axis] = { pole: cur.pole, variant: between(rand, 0, counts[cur.pole] - 1) };
  }
  return s;
}

/**
 * Renders a preferred and a dispreferred side of one sample so that length tells nothing: a coin
 * decides whether the preferred side is to be the shorter one, and the variants of the axes
 * that may change (`free`) are re-drawn (a few tries) until it is. Neither side gains or loses
 * content: only the variants of its own poles change, so length balance adds no other cue.
 */
export function balancedPair(
  rand: Rand,
  sample: Sample,
  preferred: Style,
  dispreferred: Style,
  free: { preferred: readonly Axis[]; dispreferred: readonly Axis[] },
): { preferred: string; dispreferred: string; preferredStyle: Style; dispreferredStyle: Style } {
  const wantShorter = rand() < 0.5;
  let p = preferred;
  let d = dispreferred;
  let best = { preferred: render(sample, p), dispreferred: render(sample, d), preferredStyle: p, dispreferredStyle: d };
  for (let i = 0; i < 12; i++) {
    const lp = best.preferred.length;
    const ld = best.dispreferred.length;
    if (lp !== ld && lp < ld === wantShorter) break;
    p = rerollVariants(rand, sample.kind, preferred, free.preferred);
    d = rerollVariants(rand, sample.kind, dispreferred, free.dispreferred);
    best = { preferred: render(sample, p), dispreferred: render(sample, d), preferredStyle: p, dispreferredStyle: d };
  }
  return best;
}

/** The agent whose output a held-out pair of this axis comes from, alternating over the axis's agents. */
export function agentForAxis(axis: Axis, i: number): Agent {
  const agents = AXIS_INFO[axis].agents;
  return agents[i % agents.length] as Agent;
}
