import { isBondOnly, type Agent } from '../../memoir/format/agents.js';
import type { CouncilFields } from '../../memoir/derive/council-fields.js';
import type { MemoirEntry } from '../../memoir/format/schema.js';
import type { EntryType, ResponseKind, Source } from '../../memoir/format/sources.js';
import { understoodPair, unusedPreference } from '../../memoir/format/preference.js';
import { entryTypeOf } from '../../memoir/format/split-rule.js';
import { ROUTE_LABELS, routeTarget, routeText } from './route-text.js';
import type { ChosenBy, Example } from './types.js';

/**
 * Memoir entry -> labelled examples, one table of rules for every agent (LEARNING-DESIGN.md §1).
 * Both views go through `examplesOf`; the council view gives it only what the council field rule
 * allows (`fromCouncilFields`), so the rules cannot reach text the council may not see.
 *
 *   agent                     kind     from
 *   hephaestus                route    a `route:<specialist>` proposal the player did not step in
 *                                      on (rejected or modified = intervened, skipped); text =
 *                                      the task description (bond), else the task type (council)
 *   metis, techne, mneme,     pair     a preference pair (proposed vs revised, or two candidates)
 *   dokimasia, kallos, aidos, binary   a proposal's outcome: accepted 1; modified, rejected 0
 *   aletheia                           an interrupt's outcome: taken (accepted, modified) 1,
 *                                      dismissed (rejected) 0  (Aidos's slop calls, Aletheia's
 *                                      corrections, Dokimasia's safety stops)
 *                           graded   a Likert rating (r − 1) / 4, instead of the binary outcome
 *   cupid, puck (bond only)   graded   scene acceptance (accepted 1, modified .75, deferred .5,
 *                                      rejected 0), else affinity gain clamp(0.5 + 5·Δ, 0, 1)
 * Deferred answers teach nothing and are skipped; `training_label.weight` is the weight (an
 * entry whose weight is not > 0 is skipped).
 */

export interface ExampleFields {
  entryId: string;
  scene: string;
  agent: Agent;
  source: Source;
  entryType: EntryType;
  taskType: string | null;
  weight: number | null;
  /** Text the agent is judged on (agent_proposed). */
  text: string | null;
  outcome: { kind: ResponseKind } | null;
  pair: { chosen: string; rejected: string; chosenBy: ChosenBy } | null;
  likert: number | null;
  affinityDelta: number;
  beat: string | null;
  /** The scene's task description (bond only). */
  description: string | null;
  /** Host signals from the entry's context (bond only): see `hostSignals`. */
  signals: HostSignals;
  /** A preference list that states no pair kourai reads (format/preference.ts): counted as unused. */
  unusedPreference?: boolean;
  /** A host signal written with another type (`"tests_passed": "yes"`): counted as not read. */
  unreadSignal?: boolean;
}

/**
 * Context keys the trainer reads when a host writes them (any other key is kept, not read):
 *   tests_passed: boolean      the proposal's tests passed (true) or failed (false): a binary
 *                              example, and with a passing and a failing proposal of the same
 *                              agent in one scene, a preference pair (views.ts)
 *   coverage_delta: number     change in test coverage, percentage points: a graded example
 *                              with target clamp(0.5 + Δ / 20, 0, 1)
 */
export interface HostSignals {
  testsPassed: boolean | null;
  coverageDelta: number | null;
}

export const NO_SIGNALS: HostSignals = { testsPassed: null, coverageDelta: null };

export function hostSignals(context: unknown): HostSignals {
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return NO_SIGNALS;
  const c = context as Record<string, unknown>;
  const t = c['tests_passed'];
  const d = c['coverage_delta'];
  return {
    testsPassed: typeof t === 'boolean' ? t : null,
    coverageDelta: typeof d === 'number' && Number.isFinite(d) ? d : null,
  };
}

/** Whether the context holds a host signal of another type than the one the trainer reads. */
export function hasUnreadSignal(context: unknown): boolean {
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return false;
  const c = context as Record<string, unknown>;
  const s = hostSignals(c);
  return (
    (c['tests_passed'] !== undefined && s.testsPassed === null) ||
    (c['coverage_delta'] !== undefined && s.coverageDelta === null)
  );
}

const ACCEPTANCE: Readonly<Record<ResponseKind, number>> = { accepted: 1, modified: 0.75, deferred: 0.5, rejected: 0 };

/** Every field, for the bond view (it never leaves the machine). */
export function fromEntry(e: MemoirEntry, description: string | null): ExampleFields {
  const understood = understoodPair(e.training_label?.preference_pair);
  let pair: ExampleFields['pair'] = null;
  if (understood !== null && understood.chosen !== understood.rejected) {
    const { chosen, rejected } = understood;
    const revised =
      e.source === 'player_revision' ||
      e.player_response?.kind === 'modified' ||
      (e.player_response?.delta ?? null) === chosen;
    pair = { chosen, rejected, chosenBy: revised ? 'revision' : 'choice' };
  }
  return {
    entryId: e.entry_id,
    scene: e.scene_id,
    agent: e.agent,
    source: e.source,
    entryType: entryTypeOf(e),
    taskType: e.context?.task_type ?? null,
    weight: e.training_label ? e.training_label.weight : null,
    text: e.agent_proposed,
    outcome: e.player_response ? { kind: e.player_response.kind } : null,
    pair,
    likert: typeof e.likert === 'number' ? e.likert : null,
    affinityDelta: e.affinity_delta,
    beat: e.narrative_beat,
    description,
    signals: hostSignals(e.context),
    unusedPreference: unusedPreference(e.training_label?.preference_pair),
    unreadSignal: hasUnreadSignal(e.context),
  };
}

/** Only what the council field rule allows (src/memoir/derive/council-fields.ts). */
export function fromCouncilFields(f: CouncilFields): ExampleFields {
  return {
    entryId: f.entry_id,
    scene: f.scene_id,
    agent: f.agent,
    source: f.source,
    entryType: f.entry_type,
    taskType: f.task_type,
    weight: f.weight,
    text: f.agent_text,
    outcome: f.outcome ? { kind: f.outcome.kind } : null,
    pair: f.agent_pair ? { ...f.agent_pair, chosenBy: 'choice' } : null,
    likert: f.likert,
    affinityDelta: 0,
    beat: null,
    description: null,
    signals: NO_SIGNALS,
  };
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

/** The reason counted for a preference list that is not a text/score pair kourai reads. */
export const UNUSED_PREFERENCE = 'preference_list_not_a_pair';
/** The reason counted for a host signal of another type (`"tests_passed": "yes"`). */
export const UNREAD_SIGNAL = 'host_signal_not_read';

/** The examples an entry gives its agent; `skip(reason)` when it gives none (or leaves a label unread). */
export function examplesOf(f: ExampleFields, skip: (reason: string) => void): Example[] {
  // the entry's other labels still count; only the list itself is not read
  if (f.unusedPreference === true) skip(UNUSED_PREFERENCE);
  if (f.unreadSignal === true) skip(UNREAD_SIGNAL);
  const weight = f.weight ?? 1;
  if (!Number.isFinite(weight) || weight <= 0) {
    skip('zero_weight');
    return [];
  }
  const base = {
    agent: f.agent,
    entryId: f.entryId,
    scene: f.scene,
    weight,
    taskType: f.taskType,
    ...(f.agent !== 'hephaestus' && f.description !== null ? { prompt: f.description } : {}),
  };

  if (f.agent === 'hephaestus') {
    const target = f.source === 'specialist_proposed' ? routeTarget(f.text) : null;
    if (target === null) {
      skip('no_label');
      return [];
    }
    const label = ROUTE_LABELS.find((a) => a === target);
    if (!label) {
      skip('unknown_route_target');
      return [];
    }
    if (f.outcome?.kind === 'rejected' || f.outcome?.kind === 'modified') {
      skip('route_intervened');
      return [];
    }
    const text = routeText(f.description, f.taskType);
    if (text === null) {
      skip('no_task');
      return [];
    }
    const description = f.description !== null && f.description.trim() !== '' ? f.description.trim() : null;
    return [{ ...base, kind: 'route', text, description, label }];
  }

  if (isBondOnly(f.agent)) {
    const text = [f.beat, f.text].filter((x): x is string => x !== null && x !== '').join('\n');
    let target: number | null = null;
    if (f.likert !== null) target = (f.likert - 1) / 4;
    else if (f.outcome) target = ACCEPTANCE[f.outcome.kind];
    else if (f.affinityDelta !== 0) target = clamp01(0.5 + 5 * f.affinityDelta);
    if (text === '' || target === null) {
      skip('no_label');
      return [];
    }
    return [{ ...base, kind: 'graded', text, target }];
  }

  const out: Example[] = [];
  if (f.pair)
    out.push({ ...base, kind: 'pair', chosen: f.pair.chosen, rejected: f.pair.rejected, chosenBy: f.pair.chosenBy });
  const judged =
    f.text !== null && f.text !== '' && (f.source === 'specialist_proposed' || f.source === 'agent_interrupt');
  // A text on one side of the entry's own pair is already labelled by the pair: an outcome row
  // for it would repeat the label (a revised proposal as a second, always-0 example).
  const inPair = f.pair !== null && (f.text === f.pair.chosen || f.text === f.pair.rejected);
  if (judged && f.signals.testsPassed !== null)
    out.push({ ...base, kind: 'binary', text: f.text as string, label: f.signals.testsPassed ? 1 : 0 });
  if (judged && f.signals.coverageDelta !== null)
    out.push({ ...base, kind: 'graded', text: f.text as string, target: clamp01(0.5 + f.signals.coverageDelta / 20) });
  if (judged && !inPair && f.likert !== null) {
    out.push({ ...base, kind: 'graded', text: f.text as string, target: (f.likert - 1) / 4 });
  } else if (judged && !inPair && f.outcome && f.outcome.kind !== 'deferred') {
    const taken = f.source === 'agent_interrupt' ? f.outcome.kind !== 'rejected' : f.outcome.kind === 'accepted';
    out.push({ ...base, kind: 'binary', text: f.text as string, label: taken ? 1 : 0 });
  }
  if (out.length === 0) skip(f.outcome?.kind === 'deferred' ? 'deferred' : 'no_label');
  return out;
}

/**
 * Dokimasia's test pairs: in one scene, an agent's proposal whose tests passed is preferred to
 * one whose tests failed (`tests_passed` in the context). `judged` are the scene's judged
 * proposals with a test result, in memoir order.
 */
export function testPairs(
  judged: readonly { fields: ExampleFields; text: string; passed: boolean; weight: number }[],
): Example[] {
  const out: Example[] = [];
  const byScene = new Map<string, (typeof judged)[number][]>();
  for (const j of judged)
    byScene.set(`${j.fields.agent}\u0000${j.fields.scene}`, [
      ...(byScene.get(`${j.fields.agent}\u0000${j.fields.scene}`) ?? []),
      j,
    ]);
  for (const list of byScene.values()) {
    for (const p of list) {
      if (!p.passed) continue;
      for (const f of list) {
        if (f.passed || f.text === p.text) continue;
        const { fields } = p;
        out.push({
          agent: fields.agent,
          entryId: fields.entryId,
          scene: fields.scene,
          weight: Math.min(p.weight, f.weight),
          taskType: fields.taskType,
          ...(fields.description !== null ? { prompt: fields.description } : {}),
          kind: 'pair',
          chosen: p.text,
          rejected: f.text,
          chosenBy: 'choice',
        });
      }
    }
  }
  return out;
}
