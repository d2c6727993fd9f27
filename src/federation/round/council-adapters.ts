/**
 * Council adapters on the forge: each aggregate a round brings home becomes a new council version
 * in the adapter registry (origin `federation`, the council round recorded with it). Bond adapters
 * are never touched. A version is complete on disk before it is registered (AdapterStore), so a
 * round stopped mid-download leaves the previous version current.
 */
import { InvalidDataError } from '../../errors.js';
import type { FederatingAgent } from '../../memoir/format/agents.js';
import type { NamedTensor } from '../../tensor/tensor.js';
import { loraToTensors, tensorsToLora } from '../../train/adapter-layout.js';
import type { AdapterStore } from '../../train/adapter-store.js';

export interface CouncilAdapters {
  /** The forge's current council adapter of an agent (null: none yet). */
  current(agent: FederatingAgent): { version: number; tensors: NamedTensor[] } | null;
  /** The version already stored from a council round (a resumed round does not store twice). */
  storedFor(agent: FederatingAgent, roundKey: string): number | null;
  /** Stores a council round's aggregate as the agent's new current council version. */
  save(
    agent: FederatingAgent,
    tensors: readonly NamedTensor[],
    from: { councilKey: string; round: number; roundKey: string; strategy: string; metrics?: Record<string, unknown> },
  ): number;
}

interface FederationWindow {
  council_key?: unknown;
  round?: unknown;
  round_key?: unknown;
}

export function registryCouncilAdapters(
  store: AdapterStore,
  p: { rank: number; alpha: number; now: () => Date },
): CouncilAdapters {
  const spec = store.base.spec;
  return {
    current(agent) {
      const cur = store.loadCurrent(agent, 'council');
      return cur ? { version: cur.row.version, tensors: loraToTensors(spec, agent, cur.lora) } : null;
    },
    storedFor(agent, roundKey) {
      const row = store.registry
        .list({ agent: [agent], kind: 'council' })
        .find((r) => r.origin === 'federation' && (r.dataWindow as FederationWindow | null)?.round_key === roundKey);
      return row?.version ?? null;
    },
    save(agent, tensors, from) {
      let lora;
      try {
        lora = tensorsToLora(spec, agent, p.rank, tensors);
      } catch (err) {
        throw new InvalidDataError(
          `the council's ${agent} adapter of round ${from.round} does not fit this forge's base (rank ${p.rank}): ${(err as Error).message}; nothing was stored`,
        );
      }
      const row = store.save({
        agent,
        kind: 'council',
        lora,
        alpha: p.alpha,
        origin: 'federation',
        metrics: { strategy: from.strategy, ...from.metrics },
        dataWindow: { council_key: from.councilKey, round: from.round, round_key: from.roundKey },
        createdAt: p.now().toISOString(),
      });
      return row.version;
    },
  };
}
