import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LedgerResult } from '../../../src/commands/privacy/ledger.js';
import type { ReleaseResult } from '../../../src/commands/privacy/release.js';
import type { KouraiError } from '../../../src/errors.js';
import { ExitCode } from '../../../src/errors.js';
import { f32FromBase64 as fromBase64F32 } from '../../../src/tensor/float-codec.js';
import { CouncilReleaseSchema } from '../../../src/privacy/release.js';
import { openStateDb } from '../../../src/store/state-db.js';
import { runCli } from '../../helpers/run.js';
import { testCtx, type TestCtx } from '../../helpers/ctx.js';

const FP = 'sha256:test-base';
const releaseCmd = () => import('../../../src/commands/privacy/release.js');
const ledgerCmd = () => import('../../../src/commands/privacy/ledger.js');
const consentCmd = () => import('../../../src/commands/federate/consent.js');

let ctx: TestCtx;
let file: string;
beforeEach(async () => {
  ctx = testCtx();
  file = join(ctx.home, 'delta.json');
  writeFileSync(
    file,
    JSON.stringify({
      tensors: [
        { name: 'a', shape: [2, 2], data: [3, 0, 0, 0] },
        { name: 'b', shape: [1], dtype: 'F32', data: Buffer.from(new Float32Array([4]).buffer).toString('base64') },
      ],
    }),
  );
  await runCli(consentCmd, { allow: ['aidos'] }, ctx);
});
afterEach(() => ctx.cleanup());

async function failure(p: Promise<unknown>): Promise<KouraiError> {
  try {
    await p;
  } catch (err) {
    return err as KouraiError;
  }
  throw new Error('expected the command to fail');
}
const rows = (): number => {
  const db = openStateDb(ctx.home);
  const n = (db.prepare('SELECT count(*) AS n FROM releases').get() as { n: number }).n;
  db.close();
  return n;
};

describe('kourai privacy release', () => {
  it('writes exactly the release document to --out and records the spend', async () => {
    const out = join(ctx.home, 'release.json');
    const { json } = await runCli(
      releaseCmd,
      {
        baseFingerprint: FP,
        agent: 'aidos',
        round: '1',
        file,
        out,
        noiseMultiplier: '0.0001',
        agentEpsilon: '1e9',
        forgeEpsilon: '1e9',
        json: true,
      },
      ctx,
    );
    const r = json as ReleaseResult;
    expect(r).toMatchObject({ release_id: 1, reused: false, agent: 'aidos', round: '1', out, release: null });
    const doc = CouncilReleaseSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
    // ||(3,0,0,0,4)|| = 5, clipped to S = 1: (0.6, 0, 0, 0, 0.8) + tiny noise
    expect(Array.from(fromBase64F32(doc.tensors[0]?.data ?? '')).map((x) => Math.round(x * 100) / 100 + 0)).toEqual([
      0.6, 0, 0, 0,
    ]);
    expect(Math.round((fromBase64F32(doc.tensors[1]?.data ?? '')[0] as number) * 100) / 100).toBe(0.8);
    expect(rows()).toBe(1);
  });

  it('runs out of budget with exit 4 and releases nothing', async () => {
    const raw = { agent: 'aidos', file, noiseMultiplier: '1' };
    await runCli(releaseCmd, { baseFingerprint: FP, ...raw, round: '1' }, ctx);
    await runCli(releaseCmd, { baseFingerprint: FP, ...raw, round: '2' }, ctx);
    const err = await failure(
      runCli(releaseCmd, { baseFingerprint: FP, ...raw, round: '3', out: join(ctx.home, 'r3.json'), json: true }, ctx),
    );
    expect(err.exitCode).toBe(ExitCode.budgetExhausted);
    expect(err.code).toBe('budget_exhausted');
    expect(err.message).toMatch(
      /aidos: one more release would bring its ε to 9\.01\d, over the budget of 8 \(δ = 1e-5\); nothing was released/,
    );
    expect(rows()).toBe(2);
    expect(() => readFileSync(join(ctx.home, 'r3.json'))).toThrow();
  });

  it('a hand-written delta may say "dtype": "F32" with its values as numbers (as the help and the README show)', async () => {
    writeFileSync(file, JSON.stringify({ tensors: [{ name: 'a', shape: [2], dtype: 'F32', data: [0.5, -0.25] }] }));
    await runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '9', file, json: true }, ctx);
    expect(rows()).toBe(1);
    writeFileSync(file, JSON.stringify({ tensors: [{ name: 'a', shape: [2], dtype: 'F16', data: [0.5, -0.25] }] }));
    expect(
      (await failure(runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '10', file }, ctx))).exitCode,
    ).toBe(ExitCode.invalidData);
  });

  it('refuses without consent (exit 7), a bond-only agent (exit 2), a bad delta file (exit 5), bad σ (exit 2)', async () => {
    expect(
      (await failure(runCli(releaseCmd, { baseFingerprint: FP, agent: 'metis', round: '1', file }, ctx))).exitCode,
    ).toBe(ExitCode.conflict);
    expect(
      (await failure(runCli(releaseCmd, { baseFingerprint: FP, agent: 'puck', round: '1', file }, ctx))).exitCode,
    ).toBe(ExitCode.usage);
    writeFileSync(file, JSON.stringify({ tensors: [{ name: 'a', shape: [3], data: [1, 2] }] }));
    const bad = await failure(runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '1', file }, ctx));
    expect(bad.exitCode).toBe(ExitCode.invalidData);
    expect(bad.message).toMatch(/tensor "a" has shape \[3\] \(3 values\) but 2 values/);
    writeFileSync(file, '{ not json');
    expect(
      (await failure(runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '1', file }, ctx))).exitCode,
    ).toBe(ExitCode.invalidData);
    const sigma = await failure(
      runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '1', file, noiseMultiplier: '0' }, ctx),
    );
    expect(sigma.exitCode).toBe(ExitCode.usage);
    expect(sigma.message).toMatch(/--noise-multiplier 0: σ must be greater than 0/);
    const clip = await failure(
      runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '1', file, clipNorm: '-2' }, ctx),
    );
    expect(clip.message).toMatch(/--clip-norm -2: the clip norm S must be greater than 0/);
    expect(
      (await failure(runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '1', file, delta: '1.5' }, ctx)))
        .message,
    ).toMatch(/--delta 1.5/);
    expect(rows()).toBe(0);
  });

  it('a second run for the same round returns the same noised document, spending nothing', async () => {
    const a = (await runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '7', file, json: true }, ctx))
      .json as ReleaseResult;
    const b = (await runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '7', file, json: true }, ctx))
      .json as ReleaseResult;
    expect(b.reused).toBe(true);
    expect(b.release).toEqual(a.release);
    expect(rows()).toBe(1);
  });

  it('reads settings from the environment and the config file (flags win)', async () => {
    writeFileSync(join(ctx.home, 'config.json'), JSON.stringify({ privacy: { noise_multiplier: 3, clip_norm: 0.5 } }));
    ctx.env = { ...ctx.env, KOURAI_PRIVACY_CLIP_NORM: '0.25' };
    const r = (await runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '1', file, json: true }, ctx))
      .json as ReleaseResult;
    expect(r.release?.mechanism).toMatchObject({ noise_multiplier: 3, clip_norm: 0.25 });
    const r2 = (
      await runCli(
        releaseCmd,
        { baseFingerprint: FP, agent: 'aidos', round: '2', file, clipNorm: '2', json: true },
        ctx,
      )
    ).json as ReleaseResult;
    expect(r2.release?.mechanism).toMatchObject({ noise_multiplier: 3, clip_norm: 2 });
  });
});

describe('kourai privacy ledger', () => {
  it('lists releases with cumulative ε and local magnitudes, filtered by agent', async () => {
    await runCli(consentCmd, { allow: ['metis'] }, ctx);
    await runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '1', file, noiseMultiplier: '2' }, ctx);
    await runCli(releaseCmd, { baseFingerprint: FP, agent: 'metis', round: '1', file, noiseMultiplier: '2' }, ctx);
    const { json } = await runCli(ledgerCmd, { agent: [], json: true }, ctx);
    const l = json as LedgerResult;
    expect(l.releases.map((r) => [r.id, r.agent, r.round, r.noise_multiplier, r.noise_drawn])).toEqual([
      [1, 'aidos', '1', 2, true],
      [2, 'metis', '1', 2, true],
    ]);
    expect(l.releases[0]?.clipped_norm).toBeCloseTo(1, 6);
    expect(l.releases[1]?.epsilon_forge).toBeGreaterThan(l.releases[0]?.epsilon_forge as number);
    expect(l.spent.agents.aidos).toBeCloseTo(l.releases[0]?.epsilon_agent as number, 12);
    const only = (await runCli(ledgerCmd, { agent: ['metis'], json: true }, ctx)).json as LedgerResult;
    expect(only.releases.map((r) => r.agent)).toEqual(['metis']);
    const text = (await runCli(ledgerCmd, { agent: [] }, ctx)).stdout;
    expect(text).toMatch(/#\s+ROUND\s+AGENT/);
    expect(text).toMatch(/forge ε spent: /);
  });

  it('a tampered ledger is an integrity error (exit 8)', async () => {
    await runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '1', file }, ctx);
    await runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '2', file }, ctx);
    const db = openStateDb(ctx.home);
    db.exec('PRAGMA foreign_keys = OFF; DROP TRIGGER releases_no_delete; DELETE FROM releases WHERE id = 1');
    db.close();
    const err = await failure(runCli(ledgerCmd, { agent: [] }, ctx));
    expect(err.exitCode).toBe(ExitCode.integrity);
    expect(err.message).toMatch(/privacy ledger is corrupt: release 1 is missing/);
    const rel = await failure(runCli(releaseCmd, { baseFingerprint: FP, agent: 'aidos', round: '3', file }, ctx));
    expect(rel.exitCode).toBe(ExitCode.integrity); // and nothing is released on a corrupt ledger
  });
});
