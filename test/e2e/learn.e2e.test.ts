import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldOutPairs } from '../../src/memoir/planted/held-out.js';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { BIN, kourai } from './run-bin.js';

/** The new user's walk-through of issue 9, on the real binary (README "Local learning"). */
let home: string;
beforeAll(() => {
  assertBuilt();
  home = tempDir('kourai-e2e-learn-');
  expect(kourai(['memoir', 'synth', '--sessions', '8'], { home }).code).toBe(0);
}, 120_000);
afterAll(() => removeDir(home));

const run = (args: string[], input?: string) => kourai(args, { home, ...(input !== undefined ? { input } : {}) });

describe('local learning, end to end', { timeout: 240_000 }, () => {
  it('synth, train bond, adapters list, score ranks the planted style first, route, export', () => {
    const t = run(['train', 'bond', '--epochs', '20', '--json']);
    expect(t.code, t.stderr).toBe(0);
    const report = JSON.parse(t.stdout) as { agents: { agent: string; status: string; version: number }[] };
    expect(report.agents.filter((a) => a.status === 'trained').length).toBeGreaterThanOrEqual(8);
    expect(t.stderr).toMatch(/techne: trained v1/);

    const l = run(['adapters', 'list', '--json']);
    expect(JSON.parse(l.stdout).adapters.map((a: { agent: string }) => a.agent)).toContain('techne');

    // ariadne (the sample player) prefers early returns: two fresh candidates in held-out words
    const [pair] = heldOutPairs('early-returns', { seed: 99, n: 1 });
    const s = run(['score', '--agent', 'techne', pair!.dispreferred, pair!.preferred, '--json']);
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout).ranking[0].index).toBe(1);
    expect(run(['score', '--agent', 'techne', pair!.dispreferred, pair!.preferred]).stdout).toMatch(/^RANK/);

    const r = run(['route', 'write tests for the parser', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).distribution[0].agent).toBe('dokimasia');

    const out = join(home, 'peft-techne');
    const e = run(['adapters', 'export', 'techne', '--out', out, '--json']);
    expect(e.code, e.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'))).toMatchObject({ peft_type: 'LORA', r: 8, lora_alpha: 16 });
  });

  it('score --stdin streams one ranking per NDJSON line', () => {
    const lines = [{ id: 1, candidates: ['a', 'b'] }, { id: 2, candidates: ['c', 'd', 'e'] }].map((x) => JSON.stringify(x)).join('\n');
    const s = run(['score', '--agent', 'mneme', '--stdin'], `${lines}\n`);
    expect(s.code, s.stderr).toBe(0);
    const out = s.stdout.trim().split('\n').map((x) => JSON.parse(x) as { id: number; ranking: unknown[] });
    expect(out.map((o) => [o.id, o.ranking.length])).toEqual([
      [1, 2],
      [2, 3],
    ]);
  });

  it('a damaged adapter: exit 8, one line naming it and where, a JSON error document with --json', () => {
    const file = join(home, 'adapters/kallos/bond/v1/adapter_model.safetensors');
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, 100));
    const s = run(['score', '--agent', 'kallos', 'x', '--json']);
    expect(s.code).toBe(8);
    expect(s.stderr.split('\n')[0]).toBe(`kourai: kallos bond adapter v1 is corrupt: adapter_model.safetensors: truncated or not safetensors: header length ${bytes.readBigUInt64LE(0)} does not fit in a 100-byte file (${join(home, 'adapters/kallos/bond/v1')})`);
    expect(JSON.parse(s.stdout)).toMatchObject({ error: { code: 'adapter_corrupt', exit_code: 8 } });
    writeFileSync(file, bytes);
  });

  it('Ctrl-C (SIGINT) mid-training: exit 130, the previous version stays current', async () => {
    const child = spawn(process.execPath, [BIN, 'train', 'bond', '--agent', 'metis', '--epochs', '10000'], { env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (/metis: epoch/.test(err) && !child.killed) child.kill('SIGINT');
      });
      child.on('exit', (c) => resolve(c));
    });
    expect(code, err).toBe(130);
    const l = JSON.parse(run(['adapters', 'list', '--agent', 'metis', '--json']).stdout) as { adapters: { version: number; current: boolean }[] };
    expect(l.adapters).toEqual([expect.objectContaining({ version: 1, current: true })]);
  });
});
