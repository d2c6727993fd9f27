import { randomBytes } from 'node:crypto';
import { Council } from '../council/council.js';
import { defaults, type CouncilConfig } from '../council/config.js';
import { CouncilHttpError } from '../council/http-error.js';
import { SqliteCouncilStorage } from '../council/sqlite-storage.js';
import { parseOutcome } from '../council/outcome.js';
import type { RootScore } from '../council/root-set.js';
import type { ForgeRow } from '../council/storage.js';
import type { UpdateToSubmit } from '../federation/council-client.js';
import type { RoundStatus } from '../protocol/wire.js';
import type { FederatingAgent } from '../memoir/format/agents.js';
import { VirtualClock } from '../runtime/clock.js';
import { tensorFromJson, tensorToJson } from '../tensor/json.js';
import type { NamedTensor, TensorSpec } from '../tensor/tensor.js';
import { adapterLayout } from '../train/adapter-layout.js';
import type { BaseSpec } from '../train/base-spec.js';
import { strategyConfig, type SimStrategy } from './experiment.js';

/**
 * What a simulated round needs from the council: the real one, either in this process (the same
 * Council lifecycle, aggregate-round and storage code the server runs, on a virtual clock) or
 * as a separate `kourai council serve` process spoken to over HTTP (http-council.ts).
 */
export interface CouncilPort {
  readonly where: string;
  currentRound(): Promise<number>;
  /** The privacy policy the council publishes in the round's status: what its forges follow. */
  policy(round: number): Promise<RoundPolicy>;
  submit(forge: number, round: number, agent: string, update: UpdateToSubmit): Promise<void>;
  seal(forge: number, round: number): Promise<void>;
  /**
   * Every forge that can has sealed: if the round did not close on `min_forges` (an exiled forge
   * can no longer seal), let its deadline pass; then wait until it is aggregated.
   */
  finishRound(round: number): Promise<void>;
  /** The newest global adapter of an agent (round 0, the public initialisation, before any aggregate; null: no layout for it). */
  global(agent: string): Promise<NamedTensor[] | null>;
  /** Forge index → the round after which it was exiled. */
  exiles(): Promise<Map<number, number>>;
  /** Forge index → trust. */
  trust(): Promise<number[]>;
  /**
   * What each forge's update did to the council's root pairs in an aggregated round (forge name →
   * change; the agent's stored outcome, `details.root`); null without a root set, or where the
   * council's outcomes are not read (over HTTP).
   */
  rootEffects(round: number, agent: string): Promise<Record<string, RootScore | null> | null>;
  close(): Promise<void>;
}

export interface CouncilSetup {
  strategy: SimStrategy;
  /** f of the council's rule (for a sampled cohort: the Byzantine forges a cohort holds on average). */
  byzantine: number;
  forges: readonly string[];
  baseFingerprint: string;
  /** The adapter layout of every federated agent: the trainer's, for the base the forges train on. */
  layouts: Partial<Record<FederatingAgent, TensorSpec[]>>;
  /**
   * The privacy policy the council sets for the cell: S, and either σ as given (0: clip only) or
   * the cell's target ε, from which the council derives the σ it publishes (the real council's
   * code: privacy/council-sigma.ts). Under distributed noise a forge's share carries less: the
   * council accepts shares down to σ/√noiseShares.
   */
  privacy: { clipNorm: number } & (
    { noiseMultiplier: number; minNoiseMultiplier?: number } | { target: SimPrivacyTarget }
  );
  /** The council's server step (`server_lr`). */
  serverLr: number;
  /** Where the council keeps its database (a temporary directory). */
  dataDir: string;
  /** The council's root memoir (forges.ts, `writeRootMemoir`); null: none. */
  rootMemoir?: string | null;
}

/** A cell's target ε toward an observer of the council's adapters. */
export interface SimPrivacyTarget {
  epsilon: number;
  rounds: number;
  delta: number;
  /** The Poisson rate of the cell's cohorts (1: everyone, every round). */
  sampleRate: number;
  /** Forges whose noise shares sum to σ (distributed noise); null: each forge adds σ. */
  noiseShares: number | null;
}

/** S, σ and the tail margin of a round's published policy (protocol.ts, PrivacyPolicySchema). */
export interface RoundPolicy {
  clipNorm: number;
  noiseMultiplier: number;
  tailMargin: number;
  /** Why σ is what it is, when the council derived it from a target ε (absent: configured). */
  derivation?: NonNullable<RoundStatus['privacy_policy']['derivation']>;
}

export function roundPolicyOf(status: RoundStatus): RoundPolicy {
  const p = status.privacy_policy;
  return {
    clipNorm: p.clip_norm,
    noiseMultiplier: p.noise_multiplier,
    tailMargin: p.tail_margin,
    ...(p.derivation ? { derivation: p.derivation } : {}),
  };
}

/** The layouts the trainer gives each agent over `spec` at `rank` (what the council must accept). */
export function layoutsFor(
  spec: BaseSpec,
  agents: readonly FederatingAgent[],
  rank: number,
): Partial<Record<FederatingAgent, TensorSpec[]>> {
  return Object.fromEntries(agents.map((a) => [a, adapterLayout(spec, a, rank)]));
}

/** The round deadline of simulated councils: rounds close on min_forges unless a forge was exiled. */
export const SIM_DEADLINE_S = 3600;

export function simCouncilConfig(s: CouncilSetup): CouncilConfig {
  const c = strategyConfig(s.strategy, s.byzantine);
  return {
    ...defaults(s.dataDir),
    data_dir: s.dataDir,
    strategy: c.strategy,
    byzantine: c.f,
    selection: c.strategy === 'lora-fair' ? (c.selection ?? null) : null,
    min_forges: s.forges.length,
    round_deadline: SIM_DEADLINE_S,
    base_fingerprints: [s.baseFingerprint],
    server_lr: s.serverLr,
    // The council sets the policy; its forges read it from the round status and follow it.
    clip_norm: { min: s.privacy.clipNorm, max: s.privacy.clipNorm },
    ...('target' in s.privacy
      ? {
          epsilon: s.privacy.target.epsilon,
          epsilon_rounds: s.privacy.target.rounds,
          delta: s.privacy.target.delta,
          sample_rate: s.privacy.target.sampleRate,
          noise_shares: s.privacy.target.noiseShares,
        }
      : {
          noise_multiplier: {
            min: s.privacy.minNoiseMultiplier ?? s.privacy.noiseMultiplier,
            max: s.privacy.noiseMultiplier,
          },
        }),
    layouts: s.layouts,
    root_memoir: s.rootMemoir ?? null,
  };
}

export async function inProcessCouncil(s: CouncilSetup): Promise<CouncilPort> {
  const storage = new SqliteCouncilStorage(s.dataDir);
  const clock = new VirtualClock();
  const council = new Council({ storage, config: simCouncilConfig(s), clock, log: () => undefined });
  const rows: ForgeRow[] = [];
  for (const name of s.forges)
    rows.push(await storage.addForge(name, clock.now().toISOString(), () => randomBytes(32)));
  const byId = new Map(rows.map((r, i) => [r.id, i]));
  await council.start();
  const forge = (i: number): ForgeRow => rows[i] as ForgeRow;
  return {
    where: 'in-process council',
    currentRound: async () => (await council.currentRound()).round,
    policy: async (round) => roundPolicyOf(await council.roundStatus(forge(0), round)),
    submit: async (i, round, agent, u) => {
      // The body the HTTP client would send (council-client.ts), handed to the same method.
      await council.submit(forge(i), round, agent, {
        base_fingerprint: u.baseFingerprint,
        privacy: { clip_norm: u.clipNorm, noise_multiplier: u.noiseMultiplier },
        tensors: u.tensors.map(tensorToJson),
      });
    },
    seal: async (i, round) => {
      await council.seal(forge(i), round);
    },
    finishRound: async (round) => {
      await council.idle();
      if ((await storage.round(round))?.state === 'open') {
        clock.advance(SIM_DEADLINE_S * 1000);
        await council.checkDeadline();
      }
      await council.idle();
      const r = await storage.round(round);
      if (r?.state !== 'aggregated')
        throw new Error(`round ${round} did not aggregate (state ${r?.state ?? 'missing'})`);
    },
    global: async (agent) => {
      try {
        return (await council.adapter(agent)).tensors.map(tensorFromJson);
      } catch (err) {
        if (err instanceof CouncilHttpError && err.code === 'no_global') return null;
        throw err;
      }
    },
    exiles: async () => {
      const out = new Map<number, number>();
      for (const f of await storage.listForges())
        if (f.exiledRound !== null) out.set(byId.get(f.id) as number, f.exiledRound);
      return out;
    },
    trust: async () => {
      const all = new Map((await storage.listForges()).map((f) => [f.id, f.trust]));
      return rows.map((r) => all.get(r.id) ?? NaN);
    },
    rootEffects: async (round, agent) => {
      const a = await storage.aggregateOf(round, agent);
      const root = a ? parseOutcome(a.outcomeJson).details.root : undefined;
      return root && typeof root === 'object' ? (root as Record<string, RootScore | null>) : null;
    },
    close: async () => {
      await council.stop();
      await storage.close();
    },
  };
}
