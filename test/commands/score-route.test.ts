import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { removeDir, tempDir, testCtx, type TestCtx } from '../helpers/ctx.js';
import { runCli } from '../helpers/run.js';
import { plantedPairs, vocabularies } from '../train/planted-fixture.js';
import { trainedHome } from '../train/trained-home.js';

const score = () => import('../../src/commands/score.js');
const route = () => import('../../src/commands/route.js');

let template: string;
// Training three adapters in-process (the direct path's λ by cross-validation) takes a while on a busy machine.
beforeAll(() => {
  template = tempDir('kourai-score-home-');
  trainedHome(template);
}, 180_000);
afterAll(() => removeDir(template));

function home(stdinText?: string): TestCtx {
  const ctx = testCtx(stdinText === undefined ? {} : { stdinText });
  cpSync(template, ctx.home, { recursive: true });
  return ctx;
}

async function fails(
  load: Parameters<typeof runCli>[0],
  raw: Record<string, unknown>,
  ctx: TestCtx,
): Promise<{ exitCode: number; message: string }> {
  try {
    await runCli(load, raw, ctx);
  } catch (err) {
    return err as { exitCode: number; message: string };
  }
  throw new Error('expected the command to fail');
}

const fresh = plantedPairs('early_returns', { seed: 123, n: 1, vocab: vocabularies().heldout })[0]!;

describe('kourai score', () => {
  it('ranks two fresh candidates: the one in the planted style first', async () => {
    const ctx = home();
    const r = await runCli(
      score,
      { agent: 'techne', candidates: [fresh.dispreferred, fresh.preferred], json: true },
      ctx,
    );
    const res = r.json as {
      ranking: { index: number; score: number; p: number }[];
      adapters: { bond: number; council: null };
      lean: number;
    };
    expect(res.ranking.map((x) => x.index)).toEqual([1, 0]);
    expect(res.ranking[0]!.p).toBeGreaterThan(0.5);
    expect(res.adapters).toEqual({ bond: 2, council: null });
    const text = await runCli(score, { agent: 'techne', candidates: [fresh.dispreferred, fresh.preferred] }, ctx);
    expect(text.stdout).toMatch(/RANK\s+SCORE\s+P\s+CANDIDATE/);
    expect(text.stdout).toContain('techne: base + bond v2');
    ctx.cleanup();
  });

  it('takes the prompt the candidates answer (--prompt, --prompt-file, or "prompt" in a request); both flags at once is a usage error (2)', async () => {
    const ctx = home();
    const promptFile = join(ctx.home, 'prompt.txt');
    writeFileSync(promptFile, 'refactor the parser so every branch returns early');
    const a = await runCli(
      score,
      { agent: 'techne', candidates: [fresh.dispreferred, fresh.preferred], prompt: 'refactor the parser', json: true },
      ctx,
    );
    const b = await runCli(
      score,
      { agent: 'techne', candidates: [fresh.dispreferred, fresh.preferred], promptFile, json: true },
      ctx,
    );
    for (const r of [a, b])
      expect((r.json as { ranking: { index: number }[] }).ranking.map((x) => x.index)).toEqual([1, 0]);
    const both = await fails(score, { agent: 'techne', candidates: ['x', 'y'], prompt: 'p', promptFile }, ctx);
    expect(both.exitCode).toBe(ExitCode.usage);
    expect(both.message).toBe('give the prompt one way: --prompt TEXT or --prompt-file PATH');
    const missing = await fails(
      score,
      { agent: 'techne', candidates: ['x', 'y'], promptFile: join(ctx.home, 'nope.txt') },
      ctx,
    );
    expect(missing.message).toContain('nope.txt');
    ctx.cleanup();
  });

  it('reads candidates from a JSON file, with a task type', async () => {
    const ctx = home();
    const f = join(ctx.home, 'c.json');
    writeFileSync(f, JSON.stringify({ candidates: [fresh.preferred, fresh.dispreferred], task_type: 'code' }));
    const r = await runCli(score, { agent: 'techne', file: f, json: true }, ctx);
    expect((r.json as { ranking: { index: number }[] }).ranking[0]!.index).toBe(0);
    ctx.cleanup();
  });

  it('streams NDJSON: a ranking per line as it comes; a bad line answers with an error and the stream goes on', async () => {
    const lines = [
      JSON.stringify({ id: 'a', candidates: [fresh.dispreferred, fresh.preferred] }),
      'not json',
      JSON.stringify({ id: 7, candidates: [] }),
      JSON.stringify({ id: 'b', candidates: ['x', 'y', 'z'], lean: 0.2 }),
    ];
    const ctx = home(`${lines.join('\n')}\n`);
    const r = await runCli(score, { agent: 'techne', stdin: true }, ctx);
    expect(r.code).toBe(0);
    const out = ctx.stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(out).toHaveLength(4);
    expect(out[0]).toMatchObject({ id: 'a', agent: 'techne' });
    expect(out[0].ranking[0].index).toBe(1);
    expect(out[1]).toMatchObject({
      id: null,
      error: { code: 'invalid_data', message: 'line 2: not JSON', exit_code: 5 },
    });
    expect(out[2]).toMatchObject({ id: null, error: { message: 'line 3: no candidates' } });
    expect(out[3]).toMatchObject({ id: 'b', lean: 0.2 });
    expect(out[3].ranking).toHaveLength(3);
    ctx.cleanup();
  });

  it('--use and the lean: bond only is lean 0; a council that does not exist yet is not found (6)', async () => {
    const ctx = home();
    const r = await runCli(score, { agent: 'techne', candidates: ['a', 'b'], use: 'bond', json: true }, ctx);
    expect((r.json as { lean: number }).lean).toBe(0);
    const c = await fails(score, { agent: 'techne', candidates: ['a'], use: 'council' }, ctx);
    expect(c).toMatchObject({ exitCode: ExitCode.notFound, message: 'no council adapter for techne yet' });
    writeFileSync(join(ctx.home, 'config.json'), JSON.stringify({ learn: { lean: { default: 0.5, code: 0.25 } } }));
    const lean = await runCli(score, { agent: 'techne', candidates: ['a', 'b'], taskType: 'code', json: true }, ctx);
    expect((lean.json as { lean: number }).lean).toBe(0.25);
    ctx.cleanup();
  });

  it('bad input: no candidates (2), two sources (2), no adapter (6), Cupid council (2), damaged adapter (8)', async () => {
    const ctx = home();
    expect((await fails(score, { agent: 'techne' }, ctx)).exitCode).toBe(ExitCode.usage);
    expect((await fails(score, { agent: 'techne', candidates: ['a'], stdin: true }, ctx)).exitCode).toBe(
      ExitCode.usage,
    );
    expect(await fails(score, { agent: 'metis', candidates: ['a'] }, ctx)).toMatchObject({
      exitCode: ExitCode.notFound,
      message: 'no adapter for metis yet (neither bond nor council)',
    });
    expect((await fails(score, { agent: 'cupid', candidates: ['a'], use: 'council' }, ctx)).exitCode).toBe(
      ExitCode.usage,
    );
    writeFileSync(join(ctx.home, 'adapters/techne/bond/v2/adapter_model.safetensors'), Buffer.alloc(4));
    const damaged = await fails(score, { agent: 'techne', candidates: ['a'] }, ctx);
    expect(damaged.exitCode).toBe(ExitCode.integrity);
    ctx.cleanup();
  });
});

describe('kourai route', () => {
  it('puts the specialist the task words point to on top', async () => {
    const ctx = home();
    const r = await runCli(route, { task: 'write tests for the parser', json: true }, ctx);
    const d = (r.json as { distribution: { agent: string; p: number }[] }).distribution;
    expect(d[0]!.agent).toBe('dokimasia');
    expect(d).toHaveLength(7);
    expect(d.reduce((s, x) => s + x.p, 0)).toBeCloseTo(1, 9);
    const plan = await runCli(route, { task: 'plan the migration of the index', json: true }, ctx);
    expect((plan.json as { distribution: { agent: string }[] }).distribution[0]!.agent).toBe('metis');
    const text = await runCli(route, { task: 'write tests for the parser' }, ctx);
    expect(text.stdout).toMatch(/^SPECIALIST/);
    ctx.cleanup();
  });

  it('works from the first session, with no adapter: the specialists’ roles route the tasks a new player types', async () => {
    const ctx = testCtx();
    const cases: [string, string][] = [
      ['write tests for the parser', 'dokimasia'],
      ['is this citation real?', 'aletheia'],
      ['does this PR description read like AI slop?', 'aidos'],
      ['fix the null pointer crash when the config file is missing', 'techne'],
      ['split this feature across the team', 'metis'],
    ];
    for (const [task, agent] of cases) {
      const r = await runCli(route, { task, json: true }, ctx);
      const res = r.json as {
        distribution: { agent: string; p: number }[];
        adapters: unknown;
        text: string;
        prior: { cues: { agent: string; cue: string }[] };
      };
      expect(res.distribution[0]!.agent, task).toBe(agent);
      expect(res.adapters).toEqual({ council: null, bond: null });
      expect(res.text).toBe(task);
      expect(res.prior.cues[0]!.agent, task).toBe(agent);
    }
    const text = await runCli(route, { task: 'is this citation real?' }, ctx);
    expect(text.stdout).toContain('base + no adapter');
    expect(text.stdout).toMatch(/prior: the specialists' written roles; cues in the task: citation → aletheia/);
    // The task type reaches the prior, not the head's text.
    const typed = await runCli(route, { task: 'look at the frobnicator', taskType: 'test', json: true }, ctx);
    expect((typed.json as { text: string }).text).toBe('look at the frobnicator');
    expect((typed.json as { distribution: { agent: string }[] }).distribution[0]!.agent).toBe('dokimasia');
    // Asking for an adapter that is not there is still refused.
    expect(await fails(route, { task: 'x', use: 'bond' }, ctx)).toMatchObject({ exitCode: ExitCode.notFound });
    ctx.cleanup();
  });

  it('needs a task or a task type (2)', async () => {
    const ctx = home();
    expect((await fails(route, {}, ctx)).exitCode).toBe(ExitCode.usage);
    ctx.cleanup();
  });
});
