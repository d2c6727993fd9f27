import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldOutPairs } from '../../src/memoir/sample/planted/held-out.js';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { BIN, kourai } from './run-bin.js';

const READER = fileURLToPath(new URL('../fixtures/python/trl_dpo_reader.py', import.meta.url));

/** The new user's walk-through, on the real binary (README "Local learning"). */
let home: string;
beforeAll(() => {
  assertBuilt();
  home = tempDir('kourai-e2e-learn-');
  expect(kourai(['memoir', 'synth', '--sessions', '8'], { home }).code).toBe(0);
}, 120_000);
afterAll(() => removeDir(home));

const run = (args: string[], input?: string) => kourai(args, { home, ...(input !== undefined ? { input } : {}) });

describe('local learning, end to end', { timeout: 240_000 }, () => {
  it('the README walk-through exactly as written: synth, train bond (progress), adapters list, score, route, export', () => {
    // `kourai memoir synth --sessions 8` ran in beforeAll, in this fresh home
    const t = run(['train', 'bond']);
    expect(t.code, t.stderr).toBe(0);
    // progress on stderr (not a terminal: plain lines), the final table on stdout
    expect(t.stderr).toMatch(/^techne: epoch 1\/\d+ batch 1\/\d+ · train loss \d+\.\d+ .* ex\/s/m);
    expect(t.stderr).toMatch(/^techne: trained v1 after \d+ epochs/m);
    expect(t.stdout).toMatch(/^AGENT +EXAMPLES +TRAIN LOSS +VAL LOSS +VALIDATION +TRIVIAL BASELINES +ADAPTER$/m);
    expect(t.stdout).toMatch(/^techne .* pairwise \d+% .* always prefer revised \d+%.* bond v1$/m);
    expect(t.stdout).toMatch(/10 of 10 agents trained over 8 memoirs/);

    const l = run(['adapters', 'list']);
    expect(l.code, l.stderr).toBe(0);
    for (const agent of ['hephaestus', 'techne', 'dokimasia', 'cupid', 'puck'])
      expect(l.stdout).toMatch(new RegExp(`^${agent} +bond +\\*v1 .* current$`, 'm'));

    // ariadne (the sample player) prefers early returns and typed signatures: two fresh candidates
    // each, in words no memoir holds, the one in her style given second
    for (const pref of ['early-returns', 'typed-signatures'] as const) {
      const [pair] = heldOutPairs(pref, { seed: 99, n: 1 });
      const s = run(['score', '--agent', 'techne', pair!.dispreferred, pair!.preferred]);
      expect(s.code, s.stderr).toBe(0);
      expect(s.stdout.split('\n')[0]).toMatch(/^RANK +SCORE +P +CANDIDATE$/);
      expect(s.stdout.split('\n')[1], `${pref}:\n${s.stdout}`).toMatch(/^ +1 +-?\d+\.\d+ +\d\.\d+ +#2 /);
      const j = run(['score', '--agent', 'techne', pair!.dispreferred, pair!.preferred, '--json']);
      expect(JSON.parse(j.stdout).ranking[0].index).toBe(1);
    }

    const r = run(['route', 'write tests for the parser']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[1]).toMatch(/^dokimasia +\d\.\d+ /);
    expect(JSON.parse(run(['route', 'write tests for the parser', '--json']).stdout).distribution[0].agent).toBe(
      'dokimasia',
    );

    // `kourai memoir export --format trl-dpo` into ./trl-dpo of the working directory; files TRL reads
    const cwd = join(home, 'work');
    mkdirSync(cwd);
    const e = kourai(['memoir', 'export', '--format', 'trl-dpo'], { home, cwd });
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).toMatch(/^wrote \d+ shareable preference pairs in TRL's DPO format to /);
    const files = readdirSync(join(cwd, 'trl-dpo')).map((f) => join(cwd, 'trl-dpo', f));
    expect(files.map((f) => basename(f))).toContain('techne.jsonl');
    const py = spawnSync('python3', [READER, ...files], { encoding: 'utf8' });
    expect(py.stderr).toBe('');
    expect(py.status).toBe(0);

    const x = run(['adapters', 'export', 'techne', '--out', join(home, 'peft-techne'), '--json']);
    expect(x.code, x.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(home, 'peft-techne', 'adapter_config.json'), 'utf8'))).toMatchObject({
      peft_type: 'LORA',
      r: 8,
      lora_alpha: 16,
    });
  });

  it('start-up: score with the built-in encoder loads neither the endpoint client, its cache nor the routing prior; route loads the prior', () => {
    const spy = fileURLToPath(new URL('../fixtures/import-spy.mjs', import.meta.url));
    const s = kourai(['score', '--agent', 'techne', 'a', 'b'], { home, nodeArgs: ['--import', spy] });
    expect(s.code, s.stderr).toBe(0);
    expect(s.stderr).toMatch(/LOADED .*\/dist\/train\/scorer\.js/);
    expect(s.stderr).not.toMatch(
      /LOADED .*\/dist\/(train\/encoder\/embeddings-client|store\/embedding-cache|train\/route-prior\/)/,
    );
    const r = kourai(['route', 'write tests for the parser'], { home, nodeArgs: ['--import', spy] });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/LOADED .*\/dist\/train\/route-prior\/prior\.js/);
  });

  it('score --stdin streams one ranking per NDJSON line', () => {
    const lines = [
      { id: 1, candidates: ['a', 'b'] },
      { id: 2, candidates: ['c', 'd', 'e'] },
    ]
      .map((x) => JSON.stringify(x))
      .join('\n');
    const s = run(['score', '--agent', 'mneme', '--stdin'], `${lines}\n`);
    expect(s.code, s.stderr).toBe(0);
    const out = s.stdout
      .trim()
      .split('\n')
      .map((x) => JSON.parse(x) as { id: number; ranking: unknown[] });
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
    expect(s.stderr.split('\n')[0]).toBe(
      `kourai: kallos bond adapter v1 is corrupt: adapter_model.safetensors: truncated or not safetensors: header length ${bytes.readBigUInt64LE(0)} does not fit in a 100-byte file (${join(home, 'adapters/kallos/bond/v1')})`,
    );
    expect(JSON.parse(s.stdout)).toMatchObject({ error: { code: 'adapter_corrupt', exit_code: 8 } });
    writeFileSync(file, bytes);
  });

  it('Ctrl-C (SIGINT) mid-training: exit 130, the previous version stays current', async () => {
    const child = spawn(process.execPath, [BIN, 'train', 'bond', '--agent', 'metis', '--epochs', '10000'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (/metis: epoch/.test(err) && !child.killed) child.kill('SIGINT');
      });
      child.on('exit', (c) => resolve(c));
    });
    expect(code, err).toBe(130);
    const l = JSON.parse(run(['adapters', 'list', '--agent', 'metis', '--json']).stdout) as {
      adapters: { version: number; current: boolean }[];
    };
    expect(l.adapters).toEqual([expect.objectContaining({ version: 1, current: true })]);
  });
});
