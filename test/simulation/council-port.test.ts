import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CouncilHttpError } from '../../src/council/http-error.js';
import { inProcessCouncil, layoutsFor, type CouncilPort } from '../../src/simulation/council-port.js';
import { publicInit } from '../../src/protocol/public-init.js';
import type { NamedTensor } from '../../src/tensor/tensor.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';

// The simulated council is configured like a real one: the layouts of the base the forges train
// on, and the cell's privacy policy, which it publishes and enforces (forges follow it).
describe('the in-process council of a simulation', () => {
  const spec = builtinBaseSpec();
  let dir = '';
  let port: CouncilPort | null = null;
  afterEach(async () => {
    await port?.close();
    port = null;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function open(sigma: number): Promise<CouncilPort> {
    dir = mkdtempSync(join(tmpdir(), 'kourai-sim-port-'));
    port = await inProcessCouncil({
      strategy: 'fedavg',
      byzantine: 0,
      forges: ['a', 'b', 'c'],
      baseFingerprint: 'fp',
      layouts: layoutsFor(spec, ['techne'], 8),
      privacy: { clipNorm: 1, noiseMultiplier: sigma },
      serverLr: 2,
      dataDir: dir,
    });
    return port;
  }

  function update(noiseMultiplier: number): {
    baseFingerprint: string;
    clipNorm: number;
    noiseMultiplier: number;
    tensors: NamedTensor[];
  } {
    // A small update in the layout: the public initialisation scaled down.
    const tensors = publicInit(layoutsFor(spec, ['techne'], 8).techne ?? [], 'techne').map((t) => ({
      ...t,
      data: t.data.map((v) => v * 1e-3),
    }));
    return { baseFingerprint: 'fp', clipNorm: 1, noiseMultiplier, tensors };
  }

  it('publishes the policy it was given and refuses updates that declare another', async () => {
    const p = await open(2.5);
    const round = await p.currentRound();
    expect(await p.policy(round)).toEqual({ clipNorm: 1, noiseMultiplier: 2.5, tailMargin: 10 });
    await p.submit(0, round, 'techne', update(2.5));
    await expect(p.submit(1, round, 'techne', update(0))).rejects.toSatisfy(
      (e: unknown) => e instanceof CouncilHttpError && e.code === 'privacy_policy_violation',
    );
  });

  it('accepts only the agents it has layouts for', async () => {
    const p = await open(0);
    const round = await p.currentRound();
    await expect(p.submit(0, round, 'metis', update(0))).rejects.toSatisfy(
      (e: unknown) => e instanceof CouncilHttpError && e.code === 'agent_not_configured',
    );
  });
});
