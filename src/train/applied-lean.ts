/**
 * Which adapters an agent's answer uses, how far, and why. In order: `--use bond|council`; a
 * `--lean` flag (or a request's lean); a lean set in config.json or KOURAI_LEAN; the lean chosen
 * for this council version on the player's held-out scenes with the current bond (recorded by
 * the round that brought it home); a bond trained over this council version (both as trained);
 * otherwise bond only — a council version never checked against this bond is not applied.
 */
import { choiceFor, type LeanChoice, type LeanDecision } from './lean-choice.js';
import { mixing } from './learn-config.js';

/** What a round records in a council version's metrics (`validation`). */
export interface CouncilValidation {
  /** The bond version it was measured with (null: no bond then). */
  bond_version: number | null;
  scenes: number;
  examples: number;
  /** Accuracy of what this agent applied before the round, on the same examples (null: nothing applied). */
  before: number | null;
  choice: LeanChoice;
  /** The council adapter is applied at all (the agent-wide lean is above 0). */
  passed: boolean;
}

/** What a round records in a council version's metrics (`signal`): how much of the change is noise. */
export interface CouncilSignal {
  update_norm: number | null;
  noise_norm: number | null;
  /** √max(0, ‖Δ‖² − noise²) / noise: below 1 the privacy noise outweighs what the forges agreed on. */
  snr: number | null;
  /** Updates the council averaged. */
  updates: number;
}

export function signalOf(updateNorm: number | null, noiseNorm: number | null, updates: number): CouncilSignal {
  const snr =
    updateNorm !== null && noiseNorm !== null && noiseNorm > 0
      ? Math.sqrt(Math.max(0, updateNorm * updateNorm - noiseNorm * noiseNorm)) / noiseNorm
      : null;
  return { update_norm: updateNorm, noise_norm: noiseNorm, snr, updates };
}

export type LeanSource =
  'use' | 'flag' | 'config' | 'validation' | 'trained_over' | 'unvalidated' | 'no_council' | 'no_bond';

export interface AppliedLean {
  lean: number;
  source: LeanSource;
  /** One line a person reads. */
  why: string;
  /** The adapters and their weights λ at this lean (null: not loaded or weight 0). */
  bond: { version: number; weight: number } | null;
  council: { version: number; weight: number } | null;
  /** The held-out figures behind a `validation` choice. */
  validation: { examples: number; scores: LeanDecision['scores']; task_type: string | null } | null;
}

export interface LoadedRow {
  version: number;
  metrics: unknown;
}

export function councilValidationOf(metrics: unknown): CouncilValidation | null {
  const v = (metrics as { validation?: unknown } | null)?.validation as CouncilValidation | undefined;
  return v && typeof v === 'object' && v.choice && typeof v.choice === 'object' ? v : null;
}

export function councilSignalOf(metrics: unknown): CouncilSignal | null {
  const s = (metrics as { signal?: unknown } | null)?.signal as CouncilSignal | undefined;
  return s && typeof s === 'object' ? s : null;
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

export function leanLabel(lean: number): string {
  if (lean === 0) return 'bond only';
  if (lean === 1) return 'council only';
  if (lean === 0.5) return 'both';
  const w = mixing(lean);
  return `bond ×${w.bond} + council ×${w.council}`;
}

function scoresText(d: LeanDecision): string {
  return d.scores.map((s) => `${leanLabel(s.lean)} ${pct(s.accuracy)}`).join(' · ');
}

export function resolveLean(p: {
  use: 'both' | 'bond' | 'council';
  flag?: number | undefined;
  configured?: number | undefined;
  taskType: string | null;
  council: LoadedRow | null;
  bond: LoadedRow | null;
}): AppliedLean {
  const out = (
    lean: number,
    source: LeanSource,
    why: string,
    validation: AppliedLean['validation'] = null,
  ): AppliedLean => {
    const w = mixing(lean);
    return {
      lean,
      source,
      why,
      bond: p.bond && w.bond > 0 ? { version: p.bond.version, weight: w.bond } : null,
      council: p.council && w.council > 0 ? { version: p.council.version, weight: w.council } : null,
      validation,
    };
  };
  if (p.use === 'bond') return out(0, 'use', '--use bond');
  if (p.use === 'council') return out(1, 'use', '--use council');
  if (p.flag !== undefined) return out(p.flag, 'flag', `lean ${p.flag} asked for`);
  if (p.configured !== undefined)
    return out(
      p.configured,
      'config',
      `lean ${p.configured} set in config.json or KOURAI_LEAN${p.taskType ? ` (task type ${p.taskType})` : ''}`,
    );
  const { council, bond } = p;
  if (!council) return out(0, 'no_council', 'no council adapter yet');
  const v = councilValidationOf(council.metrics);
  if (v && v.bond_version === (bond?.version ?? null)) {
    const d = choiceFor(v.choice, p.taskType);
    const on = `on ${v.examples} held-out example${v.examples === 1 ? '' : 's'} of yours in ${v.scenes} scene${v.scenes === 1 ? '' : 's'}${p.taskType && v.choice.byTaskType[p.taskType]?.reason !== 'too_few' && v.choice.byTaskType[p.taskType] ? ` (task type ${p.taskType}: ${d.examples})` : ''}`;
    const why =
      d.reason === 'better'
        ? `council v${council.version} helps ${on}: ${scoresText(d)}`
        : `council v${council.version} did not beat ${bond ? 'your bond' : 'the base'} ${on}: ${scoresText(d)}`;
    return out(d.lean, 'validation', why, {
      examples: d.examples,
      scores: d.scores,
      task_type: d === v.choice.overall ? null : p.taskType,
    });
  }
  const trainedOver = (bond?.metrics as { council_version?: unknown } | null)?.council_version;
  if (bond && trainedOver === council.version)
    return out(
      0.5,
      'trained_over',
      `bond v${bond.version} was trained over council v${council.version}: both, as trained`,
    );
  if (v && !v.passed)
    return out(
      0,
      'validation',
      `council v${council.version} did not help on your held-out scenes (measured with ${v.bond_version === null ? 'no bond' : `bond v${v.bond_version}`}): not applied`,
    );
  if (!bond) return out(1, 'no_bond', `no bond adapter; council v${council.version} alone`);
  return out(
    0,
    'unvalidated',
    `council v${council.version} was never measured with bond v${bond.version} on your held-out scenes: bond only`,
  );
}
