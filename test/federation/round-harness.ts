import { randomBytes } from 'node:crypto';
import type { CouncilAdapters } from '../../src/federation/round/council-adapters.js';
import { memoirEventsWriter } from '../../src/federation/round/events-memoir.js';
import type { CouncilLearner } from '../../src/federation/round/learner.js';
import type { Membership } from '../../src/federation/round/membership.js';
import {
  runRound,
  type RoundEvent,
  type RoundOptions,
  type RoundResult,
} from '../../src/federation/round/run-round.js';
import type { CouncilTransport } from '../../src/federation/round/transport.js';
import { FEDERATING_AGENTS, type FederatingAgent } from '../../src/memoir/format/agents.js';
import type { CouncilRelease } from '../../src/privacy/release.js';
import { DEFAULT_PRIVACY_CONFIG, type PrivacyConfig } from '../../src/privacy/privacy-config.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import type { NamedTensor } from '../../src/tensor/tensor.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { SPECS } from '../council/helpers.js';
import type { TestCtx } from '../helpers/ctx.js';

/**
 * The round as a function with a small learner (every agent's layout is the council helper's two
 * small tensors; "training" adds a seeded step) and adapters kept in memory: for tests of what the
 * round sends, spends and stores, not of learning.
 */
export function smallLearner(seed: number): CouncilLearner & { trained: FederatingAgent[] } {
  const trained: FederatingAgent[] = [];
  return {
    trained,
    fingerprint: BUILTIN_FINGERPRINT,
    rank: 2,
    alpha: 2,
    layout: () => SPECS.map((s) => ({ name: s.name, shape: [...s.shape] })),
    count: () => ({ examples: 20, scenes: 4, tooLittle: null }),
    async train(agent, start) {
      trained.push(agent);
      const r = mulberry32(seed * 131 + FEDERATING_AGENTS.indexOf(agent));
      return {
        status: 'trained',
        examples: 20,
        tensors: start.map((t) => ({
          name: t.name,
          shape: [...t.shape],
          data: Float32Array.from(t.data, (v) => v + 0.05 * (r() - 0.5)),
        })),
      };
    },
    probe: async () => [],
  };
}

export function memoryAdapters(): CouncilAdapters & { saved: Map<string, NamedTensor[]> } {
  const saved = new Map<string, NamedTensor[]>();
  const versions = new Map<string, { version: number; key: string }[]>();
  return {
    saved,
    current: (agent) => {
      const v = versions.get(agent)?.at(-1);
      return v ? { version: v.version, tensors: saved.get(`${agent}@${v.version}`) ?? [] } : null;
    },
    storedFor: (agent, key) => versions.get(agent)?.find((v) => v.key === key)?.version ?? null,
    save(agent, tensors, from) {
      const list = versions.get(agent) ?? [];
      const version = list.length + 1;
      list.push({ version, key: from.roundKey });
      versions.set(agent, list);
      saved.set(
        `${agent}@${version}`,
        tensors.map((t) => ({ ...t, data: Float32Array.from(t.data) })),
      );
      return version;
    },
  };
}

/** Every release the round handed to the transport, in order (what would cross the wire). */
export function recording(t: CouncilTransport): CouncilTransport & { releases: CouncilRelease[] } {
  const releases: CouncilRelease[] = [];
  return { ...t, releases, submitRelease: (n, r) => (releases.push(r), t.submitRelease(n, r)) };
}

export const ROUND_OPTS: RoundOptions = {
  dryRun: false,
  wait: true,
  waitForMs: 60_000,
  pollMs: 10,
  retryForMs: 120_000,
  encoding: 'json',
};

export function roundDeps(
  f: { ctx: TestCtx; membership: Membership },
  p: {
    transport: CouncilTransport;
    learner: CouncilLearner;
    adapters?: CouncilAdapters;
    config?: PrivacyConfig;
    signal?: AbortSignal;
    sleep?: (ms: number) => Promise<void>;
    events?: RoundEvent[];
    options?: Partial<RoundOptions>;
  },
): { gate: PrivacyGate; run(): Promise<RoundResult> } {
  const gate = PrivacyGate.open({ home: f.ctx.home, config: p.config ?? DEFAULT_PRIVACY_CONFIG, random: randomBytes });
  const events = p.events ?? [];
  return {
    gate,
    run: (): Promise<RoundResult> =>
      runRound({
        transport: p.transport,
        membership: f.membership,
        gate,
        learner: p.learner,
        adapters: p.adapters ?? memoryAdapters(),
        events: memoirEventsWriter(f.membership.events_memoir, () => new Date()),
        now: () => new Date(),
        signal: p.signal ?? new AbortController().signal,
        sleep: p.sleep ?? ((ms) => new Promise((r) => setTimeout(r, Math.min(ms, 50)))),
        onEvent: (e) => events.push(e),
        options: { ...ROUND_OPTS, ...p.options },
      }),
  };
}
