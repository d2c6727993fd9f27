import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import aggregate from '../../src/commands/council/aggregate.js';
import forgeAdd from '../../src/commands/council/forge-add.js';
import rounds from '../../src/commands/council/rounds.js';
import serve from '../../src/commands/council/serve.js';
import trust from '../../src/commands/council/trust.js';
import type { Command } from '../../src/commands/types.js';
import { ExitCode } from '../../src/errors.js';
import { readSafetensors, writeSafetensors } from '../../src/tensor/safetensors.js';
import { dtypeOf } from '../../src/tensor/tensor.js';
import { parseOptions } from '../../src/run-command.js';
import { body, call, FINGERPRINT, SPECS, update } from '../council/helpers.js';

const LAYOUTS = JSON.stringify({ '*': SPECS });
import { honestRows } from '../aggregation/helpers.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';
import { fedavg } from '../../src/aggregation/fedavg.js';
import { loraFairLayer } from '../../src/aggregation/lora-fair.js';

let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => removeDir(ctx.home));

async function run<R>(cmd: Command<never, R>, raw: Record<string, unknown>, c: TestCtx = ctx): Promise<R> {
  return cmd.run(parseOptions(cmd as never, raw) as never, c);
}

describe('council commands (in-process)', () => {
  it('serve runs until the signal, with forge add / rounds / trust working beside it', async () => {
    const controller = new AbortController();
    const c = testCtx({ home: ctx.home, signal: controller.signal });
    const serving = run(
      serve as never,
      {
        port: '0',
        baseFingerprint: [FINGERPRINT],
        layouts: LAYOUTS,
        noiseMultiplier: '0..10',
        minForges: '2',
        strategy: 'median',
        byzantine: '0',
        json: true,
      },
      c,
    );
    while (!c.stdout.text.includes('listening')) await new Promise((r) => setTimeout(r, 10)); // until it says so (the test timeout bounds it)
    const { url } = JSON.parse(c.stdout.text.split('\n')[0] as string) as { url: string };
    const a = (await run(forgeAdd as never, { name: 'athens' })) as { token: string; forge: string };
    const b = (await run(forgeAdd as never, { name: 'sparta' })) as { token: string };
    expect(forgeAdd.render?.(a as never, ctx)).toMatch(/^forge athens added \(id 1\)\ntoken: kourai_1_/);
    for (const [i, t] of [a.token, b.token].entries()) {
      expect((await call(url, 'PUT', '/v1/rounds/1/updates/mneme', t, body(update(i)))).status).toBe(201);
      await call(url, 'POST', '/v1/rounds/1/seal', t, {});
    }
    while ((await call(url, 'GET', '/v1/rounds/1', a.token)).json.state !== 'aggregated')
      await new Promise((r) => setTimeout(r, 10));
    const r = (await run(rounds as never, {})) as Awaited<ReturnType<typeof rounds.run>>;
    expect(r.rounds.map((x) => [x.round, x.state, x.strategy, x.forges_sealed])).toEqual([
      [2, 'open', 'median', 0],
      [1, 'aggregated', 'median', 2],
    ]);
    expect(r.rounds[1]?.agents).toEqual([
      { agent: 'mneme', updates: 2, aggregated: true, used: 2, skipped_reason: null, echoes: [] },
    ]);
    expect(rounds.render?.(r as never, ctx)).toMatch(
      /ROUND\s+STATE\s+STRATEGY\s+FORGES[\s\S]*1\s+aggregated\s+median\s+2\/2[\s\S]*mneme 2\/2/,
    );
    const t = (await run(trust as never, {})) as Awaited<ReturnType<typeof trust.run>>;
    expect(t.forges.map((f) => [f.forge, f.trust, f.rounds_scored, f.exiled])).toEqual([
      ['athens', 1, 1, false],
      ['sparta', 1, 1, false],
    ]);
    expect(trust.render?.(t as never, ctx)).toMatch(
      /FORGE\s+TRUST\s+ROUNDS\s+LAST SIM\s+STATUS\nathens\s+1\.000\s+1\s+1\.000\s+active/,
    );
    controller.abort();
    await serving;
    expect(c.stdout.text).toMatch(/"event":"stopped"/);
    expect(c.stderr.text).toMatch(/council listening on http:\/\/127\.0\.0\.1:\d+ — strategy median, min 2 forges/);
  });

  it('serve refuses a busy port (exit 3) and a missing fingerprint (exit 2)', async () => {
    await expect(run(serve as never, { port: '0' })).rejects.toMatchObject({ exitCode: ExitCode.usage });
    const controller = new AbortController();
    const c = testCtx({ home: ctx.home, signal: controller.signal });
    const first = run(
      serve as never,
      { port: '0', baseFingerprint: ['x'], layouts: LAYOUTS, noiseMultiplier: '0..10', json: true },
      c,
    );
    while (!c.stdout.text.includes('listening')) await new Promise((r) => setTimeout(r, 10)); // until it says so (the test timeout bounds it)
    const { port } = JSON.parse(c.stdout.text.split('\n')[0] as string) as { port: number };
    await expect(
      run(serve as never, {
        port: String(port),
        baseFingerprint: ['x'],
        layouts: LAYOUTS,
        noiseMultiplier: '0..10',
        dataDir: join(ctx.home, 'other'),
      }),
    ).rejects.toMatchObject({
      exitCode: ExitCode.environment,
      message: expect.stringMatching(new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`)),
    });
    controller.abort();
    await first;
  });

  it('aggregate: fedavg and lora-fair on safetensors, F32 output, report', async () => {
    const rows = honestRows(3, 4, 2 * 5 + 6 * 2, { f32: true });
    const files = rows.map((r, i) => {
      const p = join(ctx.home, `u${i}.safetensors`);
      writeFileSync(
        p,
        writeSafetensors([
          { name: 'q.lora_A.weight', shape: [2, 5], data: r.subarray(0, 10) },
          { name: 'q.lora_B.weight', shape: [6, 2], data: r.subarray(10) },
        ]),
      );
      return p;
    });
    const out = join(ctx.home, 'avg.safetensors');
    const res = (await run(aggregate as never, { updates: files, strategy: 'fedavg', out })) as Awaited<
      ReturnType<typeof aggregate.run>
    >;
    expect(res).toMatchObject({ strategy: 'fedavg', coords: 22, tensors: 2, used: files });
    const written = readSafetensors(readFileSync(out)).tensors;
    const expected = fedavg(rows).aggregate;
    expect(written.map((t) => dtypeOf(t.data))).toEqual(['F32', 'F32']);
    written[0]?.data.forEach((x, k) => expect(x).toBeCloseTo(expected[k]!, 6));
    const lf = (await run(aggregate as never, {
      updates: files,
      strategy: 'lora-fair',
      out: join(ctx.home, 'lf.safetensors'),
      loraFairSteps: '50',
      loraFairLr: '0.05',
    })) as Awaited<ReturnType<typeof aggregate.run>>;
    expect(lf.layers?.[0]?.layer).toBe('q.lora_*.weight');
    const layer = loraFairLayer(
      rows.map((r) => r.subarray(0, 10)),
      rows.map((r) => r.subarray(10)),
      new Float64Array(4).fill(0.25),
      { m: 6, r: 2, n: 5 },
      { lambda: 0.01, lr: 0.05, steps: 50, reg: 'sq', cosine: 'flat', solver: 'gd' },
    );
    expect(lf.layers?.[0]?.cos_after).toBeCloseTo(layer.cosAfter, 12);
    expect(aggregate.render?.(lf as never, ctx)).toMatch(
      /lora-fair: 4 of 4 updates used, 22 coordinates in 2 tensors[\s\S]*q\.lora_\*\.weight: cos 0\.\d+ → 0\.\d+/,
    );
    const mismatch = join(ctx.home, 'm.safetensors');
    writeFileSync(
      mismatch,
      writeSafetensors([
        { name: 'q.lora_A.weight', shape: [10], data: new Float32Array(10) },
        { name: 'q.lora_B.weight', shape: [6, 2], data: new Float32Array(12) },
      ]),
    );
    await expect(
      run(aggregate as never, { updates: [files[0], mismatch], strategy: 'fedavg', out, force: true }),
    ).rejects.toMatchObject({
      exitCode: ExitCode.invalidData,
      message: expect.stringMatching(/tensor "q\.lora_A\.weight" has shape \[10\]/),
    });
    await expect(
      run(aggregate as never, { updates: files, strategy: 'fedavg', out, force: true, weightValues: '1,2' }),
    ).rejects.toMatchObject({ exitCode: ExitCode.usage });
  });
});
