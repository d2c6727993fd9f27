import { existsSync, readdirSync, readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/errors.js';
import { removeDir, tempDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { runCli } from '../../helpers/run.js';
import { trainedHome } from '../../train/trained-home.js';
import { cpSync } from 'node:fs';
import { openStateDb } from '../../../src/store/state-db.js';
import { AdapterStore } from '../../../src/train/adapter-store.js';
import { BaseModel } from '../../../src/train/base-model.js';
import { builtinBaseSpec } from '../../../src/train/base-spec.js';
import { BUILTIN_FINGERPRINT } from '../../../src/train/fingerprint.js';

const list = () => import('../../../src/commands/adapters/list.js');
const show = () => import('../../../src/commands/adapters/show.js');
const diff = () => import('../../../src/commands/adapters/diff.js');
const exp = () => import('../../../src/commands/adapters/export.js');
const rollback = () => import('../../../src/commands/adapters/rollback.js');
const prune = () => import('../../../src/commands/adapters/prune.js');

let template: string;
beforeAll(() => {
  template = tempDir('kourai-adapters-home-');
  trainedHome(template);
});
afterAll(() => removeDir(template));

function home(): TestCtx {
  const ctx = testCtx();
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

describe('kourai adapters', () => {
  it('list: every version, the current one marked, with its validation metric and base', async () => {
    const ctx = home();
    const r = await runCli(list, { json: true }, ctx);
    const rows = (
      r.json as {
        adapters: {
          agent: string;
          version: number;
          current: boolean;
          configured_base: boolean;
          metric: { name: string };
        }[];
      }
    ).adapters;
    expect(rows.map((a) => [a.agent, a.version, a.current])).toEqual([
      ['hephaestus', 1, true],
      ['techne', 1, false],
      ['techne', 2, true],
    ]);
    expect(rows.every((a) => a.configured_base)).toBe(true);
    expect(rows[0]!.metric.name).toBe('accuracy');
    const text = await runCli(list, {}, ctx);
    expect(text.stdout).toMatch(/techne\s+bond\s+\*v2/);
    ctx.cleanup();
  });

  it('show: config, tensors in PEFT layout with norms, and the metrics', async () => {
    const ctx = home();
    const r = await runCli(show, { agent: 'techne', json: true }, ctx);
    const s = r.json as {
      version: number;
      tensors: { name: string; shape: number[]; l2: number }[];
      target_modules: string[];
    };
    expect(s.version).toBe(2);
    expect(s.target_modules).toEqual(['encoder.dense', 'head.score', 'direct.score']);
    expect(s.tensors.map((t) => t.name)).toEqual([
      'base_model.model.encoder.dense.lora_A.weight',
      'base_model.model.encoder.dense.lora_B.weight',
      'base_model.model.head.score.lora_A.weight',
      'base_model.model.head.score.lora_B.weight',
      'base_model.model.direct.score.lora_A.weight',
      'base_model.model.direct.score.lora_B.weight',
    ]);
    expect(s.tensors[1]!.l2).toBeGreaterThan(0);
    const v1 = await runCli(show, { agent: 'techne', version: '1' }, ctx);
    expect(v1.stdout).toContain('techne bond adapter v1');
    ctx.cleanup();
  });

  it('diff: the effective updates of two versions and how far apart they are', async () => {
    const ctx = home();
    const r = await runCli(diff, { agent: 'techne', json: true }, ctx);
    const d = r.json as {
      from: { version: number };
      to: { version: number };
      modules: { module: string; diff_norm: number; to_norm: number }[];
    };
    expect([d.from.version, d.to.version]).toEqual([1, 2]);
    expect(d.modules.map((m) => m.module)).toEqual(['encoder.dense', 'head.score', 'direct.score']);
    expect(d.modules[0]!.diff_norm).toBeGreaterThan(0);
    const same = await runCli(diff, { agent: 'techne', from: '2', to: '2', json: true }, ctx);
    expect((same.json as typeof d).modules.map((m) => m.diff_norm)).toEqual([0, 0, 0]);
    expect((same.json as { modules: { relative: number }[] }).modules.map((m) => m.relative)).toEqual([0, 0, 0]);
    ctx.cleanup();
  });

  it('diff of two versions whose files are byte-identical reports exactly 0', async () => {
    const ctx = home();
    const db = openStateDb(ctx.home);
    const base = new BaseModel(builtinBaseSpec());
    const store = new AdapterStore(ctx.home, db, { spec: base.spec, fingerprint: BUILTIN_FINGERPRINT });
    // Factors as large as a noisy council aggregate's, where rounding shows most.
    const big = store.loadCurrent('techne', 'bond')!.lora;
    for (let i = 0; i < big.all.length; i++) big.all[i] = Math.fround((big.all[i] as number) * 1000);
    const save = (): void =>
      void store.save({
        agent: 'techne',
        kind: 'bond',
        lora: big,
        alpha: 16,
        origin: 'imported',
        metrics: {},
        dataWindow: {},
        createdAt: '2026-11-23T09:00:00.000Z',
      });
    save();
    save();
    const v3 = store.load(store.registry.get('techne', 'bond', 3)!);
    const v4 = store.load(store.registry.get('techne', 'bond', 4)!);
    db.close();
    expect(v3.lora.all).toEqual(v4.lora.all);
    expect(readFileSync(join(ctx.home, 'adapters/techne/bond/v4/adapter_model.safetensors'))).toEqual(
      readFileSync(join(ctx.home, 'adapters/techne/bond/v3/adapter_model.safetensors')),
    );
    const r = await runCli(diff, { agent: 'techne', from: '3', to: '4', json: true }, ctx);
    const d = r.json as { modules: { diff_norm: number; relative: number; to_norm: number }[] };
    expect(d.modules.map((m) => m.diff_norm)).toEqual([0, 0, 0]);
    expect(d.modules.map((m) => m.relative)).toEqual([0, 0, 0]);
    expect(d.modules.filter((m) => m.to_norm > 0).length).toBeGreaterThanOrEqual(2);
    ctx.cleanup();
  });

  it('rollback: the parent becomes current; files are untouched; rolling forward is another rollback', async () => {
    const ctx = home();
    const before = readFileSync(join(ctx.home, 'adapters/techne/bond/v2/adapter_model.safetensors'));
    const r = await runCli(rollback, { agent: 'techne', json: true }, ctx);
    expect(r.json).toEqual({ agent: 'techne', kind: 'bond', from: 2, to: 1 });
    const l = await runCli(list, { agent: ['techne'], json: true }, ctx);
    expect(
      (l.json as { adapters: { version: number; current: boolean }[] }).adapters.find((a) => a.current)!.version,
    ).toBe(1);
    expect(readFileSync(join(ctx.home, 'adapters/techne/bond/v2/adapter_model.safetensors')).equals(before)).toBe(true);
    const fwd = await runCli(rollback, { agent: 'techne', to: '2', json: true }, ctx);
    expect(fwd.json).toMatchObject({ from: 1, to: 2 });
    const none = await fails(rollback, { agent: 'hephaestus' }, ctx);
    expect(none.exitCode).toBe(ExitCode.usage);
    ctx.cleanup();
  });

  it('rollback refuses a damaged target (exit 8) and keeps the current version', async () => {
    const ctx = home();
    writeFileSync(join(ctx.home, 'adapters/techne/bond/v1/adapter_model.safetensors'), Buffer.from('garbage'));
    const err = await fails(rollback, { agent: 'techne' }, ctx);
    expect(err.exitCode).toBe(ExitCode.integrity);
    expect(err.message).toMatch(/techne bond adapter v1 is corrupt: adapter_model.safetensors: truncated/);
    const l = await runCli(list, { agent: ['techne'], json: true }, ctx);
    expect(
      (l.json as { adapters: { version: number; current: boolean }[] }).adapters.find((a) => a.current)!.version,
    ).toBe(2);
    ctx.cleanup();
  });

  it('export: a PEFT directory (the two files, byte for byte); a non-empty target is refused', async () => {
    const ctx = home();
    const out = join(ctx.home, 'export', 'techne-bond');
    const r = await runCli(exp, { agent: 'techne', out, json: true }, ctx);
    expect(r.json).toMatchObject({ version: 2, files: ['adapter_model.safetensors', 'adapter_config.json'] });
    expect(readdirSync(out).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    expect(
      readFileSync(join(out, 'adapter_model.safetensors')).equals(
        readFileSync(join(ctx.home, 'adapters/techne/bond/v2/adapter_model.safetensors')),
      ),
    ).toBe(true);
    const again = await fails(exp, { agent: 'techne', out }, ctx);
    expect(again.exitCode).toBe(ExitCode.conflict);
    ctx.cleanup();
  });

  it('prune: keeps the current version and --keep more; marks the rest pruned; clears leftovers', async () => {
    const ctx = home();
    mkdirSync(join(ctx.home, 'adapters/techne/bond/.v3.999999.abcdef.tmp'));
    const dry = await runCli(prune, { keep: '0', dryRun: true, json: true }, ctx);
    expect(dry.json).toMatchObject({ dry_run: true, pruned: [{ agent: 'techne', version: 1 }] });
    expect(existsSync(join(ctx.home, 'adapters/techne/bond/v1'))).toBe(true);
    const r = await runCli(prune, { keep: '0', json: true }, ctx);
    expect((r.json as { leftovers: string[] }).leftovers).toEqual([
      join(ctx.home, 'adapters/techne/bond/.v3.999999.abcdef.tmp'),
    ]);
    expect(existsSync(join(ctx.home, 'adapters/techne/bond/v1'))).toBe(false);
    const l = await runCli(list, { all: true, json: true }, ctx);
    expect(
      (l.json as { adapters: { agent: string; version: number; pruned_at: string | null }[] }).adapters
        .filter((a) => a.pruned_at)
        .map((a) => [a.agent, a.version]),
    ).toEqual([['techne', 1]]);
    const gone = await fails(show, { agent: 'techne', version: '1' }, ctx);
    expect(gone.exitCode).toBe(ExitCode.notFound);
    ctx.cleanup();
  });

  it('bad input: no adapter yet (6), a council adapter for Cupid (2), an unknown agent (2)', async () => {
    const ctx = home();
    expect((await fails(show, { agent: 'metis' }, ctx)).exitCode).toBe(ExitCode.notFound);
    const cupid = await fails(show, { agent: 'cupid', kind: 'council' }, ctx);
    expect(cupid).toMatchObject({
      exitCode: ExitCode.usage,
      message: 'cupid has no council adapter: Cupid and Puck are bond-only',
    });
    const unknown = await fails(show, { agent: 'zeus' }, ctx);
    expect(unknown.exitCode).toBe(ExitCode.usage);
    expect(unknown.message).toMatch(/unknown agent "zeus"/);
    ctx.cleanup();
  });
});
