/**
 * The plan of a round, decided before anything is trained or sent: per agent, whether she speaks
 * and why not, what exactly would leave (tensor names and shapes, the clip norm, σ, the ε it
 * costs, the release envelope with the tensor payloads elided, the request), and where her
 * training starts. `federate round --dry-run` prints it; `kourai whisper` shows the same plan;
 * the round follows it.
 */
import type { PrivacyFloor } from '../../privacy/privacy-floor.js';
import { AGENTS, isBondOnly, type Agent, type FederatingAgent } from '../../memoir/format/agents.js';
import type { RoundPlan as BudgetPlan } from '../../privacy/budget.js';
import type { PrivacyConfig } from '../../privacy/privacy-config.js';
import { COUNCIL_RELEASE_FORMAT, RELEASE_METADATA_KEY } from '../../privacy/release.js';
import { numel, type TensorSpec } from '../../tensor/tensor.js';
import { path, SAFETENSORS_BODY_TYPE, type RoundStatus } from '../../protocol/wire.js';
import type { ExampleCount } from './learner.js';

export type AgentVerdict =
  | 'speaks'
  | 'resumes'
  | 'bond_only'
  | 'no_consent'
  | 'no_shareable_entries'
  | 'too_little_data'
  | 'agent_budget'
  | 'forge_budget'
  | 'round_closed'
  | 'not_accepted';

export const AGENT_VERDICT_TEXT: Readonly<Record<AgentVerdict, string>> = {
  speaks: 'speaks: consent, enough shareable data, whisper capacity left',
  resumes:
    'speaks: her update was drawn in an interrupted run of this round and is sent as it was (no new noise, nothing more spent)',
  bond_only: 'silent: bond-only, never leaves the forge',
  no_consent: 'silent: no consent (kourai federate consent)',
  no_shareable_entries: 'silent: no shareable entries to learn from',
  too_little_data: 'silent: too little shareable data to train on',
  agent_budget: 'silent: one more round would exceed her whisper capacity',
  forge_budget: "silent: one more round would exceed the forge's whisper capacity",
  round_closed: 'silent: the round closed before she could speak',
  not_accepted: 'silent: the council accepts no updates for her (it has no adapter layout for her)',
};

export interface PlannedRequest {
  method: 'PUT';
  path: string;
  content_type: string;
  /** The exact size of the body. */
  bytes: number;
}

export interface AgentRoundPlan {
  agent: Agent;
  verdict: AgentVerdict;
  speaks: boolean;
  why: string;
  detail: string | null;
  /** Council examples (shareable entries, council fields only); null for bond-only agents. */
  examples: number | null;
  scenes: number | null;
  /** Exactly the tensors that would leave: names and shapes (PEFT layout). */
  tensors: TensorSpec[] | null;
  coords: number | null;
  clip_norm: number | null;
  noise_multiplier: number | null;
  /** This agent's ε increase if she speaks, and her ε after. */
  epsilon_cost: number | null;
  epsilon_after: number | null;
  /** Where training starts: the global adapter of a council round, or (round 0) the council's public initialisation. */
  starts_from: { kind: 'global'; round: number } | { kind: 'public_init' } | null;
  /** The release document with the tensor payloads elided (what the body is, but for the noised values). */
  envelope: Record<string, unknown> | null;
  request: PlannedRequest | null;
}

export interface FederationPlan {
  council: { url: string; forge: string; council_key: string };
  round: number;
  round_key: string;
  round_state: string;
  /** True when this run finishes a round an earlier run started. */
  resuming: boolean;
  base_fingerprint: string;
  mechanism: { source: 'forge' | 'council'; clip_norm: number; noise_multiplier: number; delta: number };
  /** The player's privacy floor the mechanism was checked against (src/privacy/privacy-floor.ts). */
  floor: PrivacyFloor;
  encoding: 'json' | 'safetensors';
  forge: { epsilon_spent: number; epsilon_budget: number; epsilon_after_round: number };
  agents: AgentRoundPlan[];
  speakers: FederatingAgent[];
}

/** The JSON body size of a release: the envelope around the tensors, each data field exactly base64 of 4·n bytes. */
export function releaseBodyBytes(
  envelope: Record<string, unknown>,
  tensors: readonly TensorSpec[],
  encoding: 'json' | 'safetensors',
): number {
  if (encoding === 'json') {
    const withEmpty = JSON.stringify({
      ...envelope,
      tensors: tensors.map((t) => ({ name: t.name, shape: t.shape, dtype: 'F32', data: '' })),
    });
    return Buffer.byteLength(withEmpty) + tensors.reduce((s, t) => s + 4 * Math.ceil((4 * numel(t.shape)) / 3), 0);
  }
  // safetensors: 8-byte length, the JSON header padded to 8, then the raw float32 values
  const header: Record<string, unknown> = {
    __metadata__: { [RELEASE_METADATA_KEY]: JSON.stringify(envelope), 'kourai.data_sha256': '0'.repeat(64) },
  };
  let offset = 0;
  for (const t of tensors) {
    const n = 4 * numel(t.shape);
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + n] };
    offset += n;
  }
  const h = Buffer.byteLength(JSON.stringify(header));
  return 8 + h + ((8 - ((8 + h) % 8)) % 8) + offset;
}

export function planFederationRound(p: {
  council: { url: string; forge: string; council_key: string };
  status: RoundStatus;
  roundKey: string;
  resuming: boolean;
  floor: PrivacyFloor;
  baseFingerprint: string;
  config: PrivacyConfig;
  source: 'forge' | 'council';
  encoding: 'json' | 'safetensors';
  /** gate.planRound over the council example counts (too-little agents given 0). */
  budget: BudgetPlan;
  counts: ReadonlyMap<Agent, ExampleCount>;
  /** Agents with a release already drawn for this round. */
  drawn: ReadonlySet<string>;
  layout: (agent: FederatingAgent) => TensorSpec[];
}): FederationPlan {
  const { config, status } = p;
  const open = status.state === 'open' && !status.you.sealed;
  const agents: AgentRoundPlan[] = AGENTS.map((agent) => {
    const b = p.budget.agents.find((a) => a.agent === agent);
    const count = p.counts.get(agent) ?? null;
    const blank = {
      agent,
      examples: count?.examples ?? null,
      scenes: count?.scenes ?? null,
      tensors: null,
      coords: null,
      clip_norm: null,
      noise_multiplier: null,
      epsilon_cost: null,
      epsilon_after: null,
      starts_from: null,
      envelope: null,
      request: null,
    };
    const silent = (verdict: AgentVerdict, detail: string | null = null): AgentRoundPlan => ({
      ...blank,
      verdict,
      speaks: false,
      why: AGENT_VERDICT_TEXT[verdict],
      detail,
    });
    if (isBondOnly(agent)) return silent('bond_only');
    const fa = agent as FederatingAgent;
    let verdict: AgentVerdict;
    let detail: string | null = null;
    if (p.drawn.has(agent)) verdict = status.you.submitted.includes(agent) || open ? 'resumes' : 'round_closed';
    else if (!b || b.verdict === 'no_consent') verdict = 'no_consent';
    else if (count?.tooLittle) {
      verdict = 'too_little_data';
      detail = count.tooLittle;
    } else if (b.verdict === 'no_shareable_entries') verdict = 'no_shareable_entries';
    else if (b.verdict === 'agent_budget' || b.verdict === 'forge_budget') {
      verdict = b.verdict;
      const who =
        b.verdict === 'agent_budget'
          ? { spent: b.capacity?.epsilonSpent ?? 0, budget: config.agentEpsilon }
          : { spent: p.budget.forge.epsilonSpent, budget: config.forgeEpsilon };
      const cost = b.verdict === 'agent_budget' ? b.nextRoundAgentCost : b.nextRoundForgeCost;
      detail = `ε ${who.spent.toFixed(3)} of ${who.budget} spent; one more release at σ = ${config.noiseMultiplier} costs ${cost === null ? '?' : cost.toFixed(3)}`;
    } else if (!open) verdict = 'round_closed';
    // Nothing is spent on an update the council would refuse.
    else if (!status.agents.includes(fa) || status.globals[fa] === undefined) verdict = 'not_accepted';
    else verdict = 'speaks';
    if (verdict !== 'speaks' && verdict !== 'resumes')
      return silent(
        verdict,
        detail ??
          (verdict === 'round_closed'
            ? `round ${status.round} is ${status.you.sealed ? 'sealed by this forge' : status.state}`
            : null),
      );
    const tensors = p.layout(fa);
    const g = status.globals[fa];
    const envelope = {
      format: COUNCIL_RELEASE_FORMAT,
      round: p.roundKey,
      agent: fa,
      base_fingerprint: p.baseFingerprint,
      mechanism: {
        name: 'gaussian',
        clip_norm: config.clipNorm,
        noise_multiplier: config.noiseMultiplier,
        sample_rate: 1,
        accountant: 'rdp',
      },
    };
    const elided = {
      ...envelope,
      tensors: tensors.map((t) => ({
        name: t.name,
        shape: t.shape,
        dtype: 'F32',
        data: `<elided: ${numel(t.shape)} float32 values, noised>`,
      })),
    };
    return {
      ...blank,
      verdict,
      speaks: true,
      why: AGENT_VERDICT_TEXT[verdict],
      detail: verdict === 'resumes' ? 'drawn earlier: the stored release is sent' : null,
      tensors,
      coords: tensors.reduce((s, t) => s + numel(t.shape), 0),
      clip_norm: config.clipNorm,
      noise_multiplier: config.noiseMultiplier,
      epsilon_cost: verdict === 'resumes' ? 0 : (b?.nextRoundAgentCost ?? null),
      epsilon_after: verdict === 'resumes' ? (b?.capacity?.epsilonSpent ?? null) : (b?.epsilonAfterNext ?? null),
      starts_from:
        verdict === 'resumes' || g === undefined
          ? null
          : g === 0
            ? { kind: 'public_init' }
            : { kind: 'global', round: g },
      envelope: elided,
      request: {
        method: 'PUT',
        path: path.submit(status.round, fa),
        content_type: p.encoding === 'json' ? 'application/json' : SAFETENSORS_BODY_TYPE,
        bytes: releaseBodyBytes(envelope, tensors, p.encoding),
      },
    };
  });
  const speakers = agents.filter((a) => a.speaks).map((a) => a.agent as FederatingAgent);
  const newSpeakers = agents.filter((a) => a.verdict === 'speaks').length;
  return {
    council: p.council,
    round: status.round,
    round_key: p.roundKey,
    round_state: status.state,
    resuming: p.resuming,
    base_fingerprint: p.baseFingerprint,
    mechanism: {
      source: p.source,
      clip_norm: config.clipNorm,
      noise_multiplier: config.noiseMultiplier,
      delta: config.delta,
    },
    floor: p.floor,
    encoding: p.encoding,
    forge: {
      epsilon_spent: p.budget.forge.epsilonSpent,
      epsilon_budget: config.forgeEpsilon,
      epsilon_after_round: newSpeakers > 0 ? p.budget.forge.epsilonAfterRound : p.budget.forge.epsilonSpent,
    },
    agents,
    speakers,
  };
}
