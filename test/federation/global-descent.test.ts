import { describe, expect, it } from 'vitest';
import { ExitCode, KouraiError } from '../../src/errors.js';
import type { DownloadedAdapter } from '../../src/federation/council-client.js';
import { checkGlobalDescent } from '../../src/federation/round/adapter-check.js';
import { normBound, SERVER_LR_MAX } from '../../src/protocol/norm-bound.js';
import { publicInit, PUBLIC_INIT_SCHEME } from '../../src/protocol/public-init.js';
import type { RoundStatus } from '../../src/protocol/wire.js';
import type { NamedTensor, TensorSpec } from '../../src/tensor/tensor.js';

/**
 * A forge that joins after round 1 starts from a global it has nothing of its own to compare with.
 * A council that serves a global of huge finite values (±3e38) would otherwise be trained from, and
 * its next aggregate, a small step from that global, stored as the council adapter. The global is
 * checked against the public initialisation the forge recomputes, with what each round that
 * produced it may move it by.
 */
const LAYOUT: TensorSpec[] = [
  { name: 'base_model.model.score.lora_A.weight', shape: [2, 8] },
  { name: 'base_model.model.score.lora_B.weight', shape: [4, 2] },
];
const D = 24;
const AGENT = 'metis';
const SEED = 7;
const POLICY: RoundStatus['privacy_policy'] = {
  clip_norm: 1,
  noise_multiplier: 0.5,
  accepted: { clip_norm: { min: 1, max: 1 }, noise_multiplier: { min: 0.5, max: 0.5 } },
  tail_margin: 10,
};
const PER_ROUND = 2 * normBound(1, 0.5, D, 10); // one update per round

/** Round k's status: it aggregated the agent from the global of round k − 1, with one update. */
function status(k: number, over: { aggregated?: boolean; from?: number } = {}): RoundStatus {
  return {
    round: k,
    privacy_policy: POLICY,
    globals: { [AGENT]: over.from ?? k - 1 },
    outcomes: [
      {
        agent: AGENT,
        updates: 1,
        aggregated: over.aggregated ?? true,
        skipped_reason: null,
        used: 1,
        yours_used: null,
      },
    ],
  } as unknown as RoundStatus;
}

/** The public initialisation moved by `norm` along the first coordinate of the B factor. */
function adapter(round: number, norm: number): DownloadedAdapter {
  const tensors: NamedTensor[] = publicInit(LAYOUT, AGENT, SEED);
  (tensors[1] as NamedTensor).data[0] = norm;
  return { agent: AGENT, round, strategy: 'fedavg', digest: '', tensors } as unknown as DownloadedAdapter;
}

async function check(a: DownloadedAdapter, round: number, statuses = (k: number) => status(k)) {
  const asked: number[] = [];
  const err = await checkGlobalDescent(a, {
    layout: LAYOUT,
    round,
    publicInit: { scheme: PUBLIC_INIT_SCHEME, seed: SEED },
    statusOf: (k) => {
      asked.push(k);
      return Promise.resolve(statuses(k));
    },
  }).catch((e: unknown) => e);
  return { err: err as KouraiError | undefined, asked };
}

describe('a global is checked against the public initialisation it descends from', () => {
  it('round 0 must be the public initialisation exactly', async () => {
    expect((await check(adapter(0, 0), 0)).err).toBeUndefined();
    const { err } = await check(adapter(0, 1e-3), 0);
    expect(err).toBeInstanceOf(KouraiError);
    expect(err).toMatchObject({ exitCode: ExitCode.invalidData, code: 'council_adapter_refused' });
    expect(err?.message).toMatch(/is not the public initialisation/);
  });

  it('round 3 may have moved by what three rounds allow, asking each round once', async () => {
    const ok = await check(adapter(3, 3 * PER_ROUND * 0.99), 3);
    expect(ok.err).toBeUndefined();
    expect(ok.asked).toEqual([3, 2, 1]);
    const far = await check(adapter(3, 3 * PER_ROUND * 1.01), 3);
    expect(far.err?.message).toMatch(/from the public initialisation, more than the 3 rounds that produced it allow/);
  });

  it('huge finite values (±3e38) are refused', async () => {
    const a = adapter(1, 0);
    for (const t of a.tensors) for (let i = 0; i < t.data.length; i++) t.data[i] = i % 2 ? 3e38 : -3e38;
    expect((await check(a, 1)).err).toMatchObject({ code: 'council_adapter_refused' });
  });

  it('a chain the statuses do not support is refused (no aggregation, or a global that is not earlier)', async () => {
    const none = await check(adapter(2, 0), 2, (k) => status(k, { aggregated: k !== 1 }));
    expect(none.err?.message).toMatch(/descends from round 1, which the council does not say aggregated/);
    const loop = await check(adapter(2, 0), 2, (k) => status(k, { from: k }));
    expect(loop.err).toMatchObject({ code: 'council_adapter_refused' });
  });

  it('an initialisation scheme this forge does not know: the global cannot be checked, and is refused', async () => {
    const err = await checkGlobalDescent(adapter(2, 0), {
      layout: LAYOUT,
      round: 2,
      publicInit: { scheme: 'kourai.public-init/9', seed: SEED },
      statusOf: () => Promise.reject(new Error('not asked')),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'council_adapter_refused' });
    expect((err as Error).message).toMatch(/scheme "kourai.public-init\/9" is not one this kourai knows/);
  });

  it("a council's server step widens what a round may move, up to the largest step a forge allows", async () => {
    const stepped = (lr: number | undefined) => (k: number) =>
      ({ ...status(k), strategy: lr === undefined ? {} : { server_lr: lr } }) as unknown as RoundStatus;
    expect((await check(adapter(1, 1.5 * PER_ROUND), 1, stepped(2))).err).toBeUndefined();
    expect((await check(adapter(1, 1.5 * PER_ROUND), 1, stepped(undefined))).err?.message).toMatch(
      /more than the round/,
    );
    expect((await check(adapter(1, SERVER_LR_MAX * PER_ROUND * 0.99), 1, stepped(1000))).err).toBeUndefined();
    const { err } = await check(adapter(1, SERVER_LR_MAX * PER_ROUND * 1.01), 1, stepped(1000));
    expect(err?.message).toMatch(/more than the round that produced it allows/);
  });
});
