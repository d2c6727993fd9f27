import { SERVER_LR } from '../../src/council/config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inProcessCouncil, type CouncilPort, type CouncilSetup } from '../../src/simulation/council-port.js';
import { DEFAULT_EXPERIMENT, type Experiment } from '../../src/simulation/experiment.js';
import { runExperiment } from '../../src/simulation/run.js';
import type { NamedTensor } from '../../src/tensor/tensor.js';

const flat = (ts: readonly NamedTensor[]): number[] => ts.flatMap((t) => Array.from(t.data));
const l2 = (v: readonly number[]): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

/**
 * The harness follows protocol v2 as `federate round` does: every forge starts round 1 from the
 * council's published round-0 global (the public PEFT initialisation) and sends trained − that,
 * clipped to S. With FedAvg and no noise the round-1 global is round 0 + the mean of vectors of
 * norm ≤ S, so it lies within S of round 0; under v1 (factors sent and clipped) it was the mean of
 * clipped factors, ~‖init‖ − S away from the initialisation.
 */
describe('the simulation starts round 1 from the council’s public initialisation', () => {
  it('round-1 global − round-0 global has norm ≤ server step × S (FedAvg, ε = ∞); round 0 is a PEFT init (A ≠ 0, B = 0)', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'kourai-sim-init-'));
    const x: Experiment = {
      ...DEFAULT_EXPERIMENT,
      forges: 3,
      cohort: 3,
      byzantine: 0,
      rounds: 1,
      seeds: [1],
      strategies: ['fedavg'],
      attacks: ['none'],
      epsilons: [Infinity],
      reference: 'fedavg',
      sessions: 3,
      turns: 8,
      heldOut: 10,
      coldStart: [],
    };
    const seen: (NamedTensor[] | null)[] = [];
    const recording = async (s: CouncilSetup): Promise<CouncilPort> => {
      const p = await inProcessCouncil(s);
      return { ...p, global: async (agent) => (seen.push(await p.global(agent)), seen.at(-1) ?? null) };
    };
    try {
      // Stop after the first cell: it is the one under test.
      const ac = new AbortController();
      await runExperiment({ x, scratch, port: recording, signal: ac.signal, onCell: () => ac.abort() });
      const [g0, g1] = seen;
      expect(g0, 'the council publishes a round-0 global').toBeTruthy();
      expect(g1).toBeTruthy();
      const init = g0 as NamedTensor[];
      expect(init.filter((t) => t.name.endsWith('lora_B.weight')).every((t) => t.data.every((v) => v === 0))).toBe(
        true,
      );
      expect(l2(flat(init))).toBeGreaterThan(2); // ≈ 2.3 at rank 8: larger than S = 1
      const start = flat(init);
      const moved = l2(flat(g1 as NamedTensor[]).map((v, i) => v - (start[i] as number)));
      expect(moved).toBeGreaterThan(0);
      // FedAvg of updates clipped to S, times the council's server step.
      expect(moved).toBeLessThanOrEqual(SERVER_LR * x.clipNorm * (1 + 1e-5));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});
