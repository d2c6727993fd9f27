import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSafetensors, writeSafetensors } from '../../src/tensor/safetensors.js';
import { body, call, FINGERPRINT, SPECS, update } from '../council/helpers.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { BIN, kourai } from './run-bin.js';

let home: string;
beforeAll(() => {
  home = tempDir('kourai-council-e2e-');
});
afterAll(() => removeDir(home));

interface Serving {
  proc: ChildProcess;
  url: string;
  stderr: () => string;
}

/** Starts `kourai council serve` and resolves once it is listening. */
function serve(dataDir: string, args: string[] = []): Promise<Serving> {
  const proc = spawn(
    process.execPath,
    [
      BIN,
      'council',
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--base-fingerprint',
      FINGERPRINT,
      '--layouts',
      JSON.stringify({ '*': SPECS }),
      '--noise-multiplier',
      '0..10',
      '--json',
      ...args,
    ],
    {
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => resolve({ proc, url: (JSON.parse(line) as { url: string }).url, stderr: () => err }));
    proc.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

/** Resolves with the exit code (null when killed by a signal), also if the process already exited. */
function exited(p: ChildProcess): Promise<number | null> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(p.exitCode);
  return new Promise((r) => p.once('exit', (code) => r(code)));
}

function addForge(dataDir: string, name: string): string {
  const r = kourai(['council', 'forge', 'add', name, '--data-dir', dataDir, '--json'], { home });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { token: string }).token;
}

describe('kourai council (the real binary)', () => {
  it('forge add --json prints the token once; a duplicate name is a conflict (exit 7)', () => {
    const dir = join(home, 'c-forge');
    const r = kourai(['council', 'forge', 'add', 'athens', '--data-dir', dir, '--json'], { home });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { forge: string; id: number; token: string };
    expect(out).toMatchObject({ forge: 'athens', id: 1 });
    expect(out.token).toMatch(/^kourai_1_[A-Za-z0-9_-]{43}$/);
    expect(r.stderr).toMatch(/shown only now/);
    expect(readFileSync(join(dir, 'council.db')).includes(Buffer.from(out.token))).toBe(false);
    const dup = kourai(['council', 'forge', 'add', 'athens', '--data-dir', dir], { home });
    expect(dup.code).toBe(7);
    expect(dup.stderr).toMatch(/^kourai: a forge named "athens" already exists/);
    expect(kourai(['council', 'forge', 'add', 'no spaces', '--data-dir', dir], { home }).code).toBe(2);
    const t = kourai(['council', 'trust', '--data-dir', dir, '--json'], { home });
    expect(JSON.parse(t.stdout).forges).toMatchObject([{ forge: 'athens', trust: 1, exiled: false }]);
    expect(kourai(['council', 'rounds', '--data-dir', join(home, 'nowhere')], { home }).code).toBe(6);
  });

  it('aggregate: Bulyan on safetensors files reproduces the Flower reference; errors have documented exit codes', () => {
    const ref = JSON.parse(
      readFileSync(new URL('../fixtures/aggregation/robust-n11-f2.json', import.meta.url), 'utf8'),
    ) as { inputs: number[][]; bulyan_result: number[]; bulyan_selected: number[]; krum_index: number };
    const dir = join(home, 'agg');
    kourai(['council', 'forge', 'add', 'x', '--data-dir', dir], { home });
    const files = ref.inputs.map((v, i) => {
      const p = join(dir, `u${i}.safetensors`);
      writeFileSync(p, writeSafetensors([{ name: 'w', shape: [2, 3], data: Float64Array.from(v) }]));
      return p;
    });
    const out = join(dir, 'bulyan.safetensors');
    const r = kourai(
      [
        'council',
        'aggregate',
        '--strategy',
        'bulyan',
        '--byzantine',
        '2',
        ...files,
        '-o',
        out,
        '--dtype',
        'F64',
        '--json',
      ],
      { home },
    );
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as { used: string[]; theta: number; beta: number };
    expect(res.used).toEqual(ref.bulyan_selected.map((i) => files[i]));
    expect([res.theta, res.beta]).toEqual([7, 3]);
    const [w] = readSafetensors(readFileSync(out)).tensors;
    expect(w?.shape).toEqual([2, 3]);
    w?.data.forEach((x, k) => expect(Math.abs(x - ref.bulyan_result[k]!)).toBeLessThan(1e-9));
    const text = kourai(
      ['council', 'aggregate', '--strategy', 'krum', '--byzantine', '2', ...files, '-o', join(dir, 'krum.safetensors')],
      { home },
    );
    expect(text.stdout).toMatch(/^krum \(f=2\): 1 of 11 updates used, 6 coordinates in 1 tensors/);
    // preconditions are usage errors; bad files invalid data; missing files not found
    const pre = kourai(
      ['council', 'aggregate', '--strategy', 'bulyan', '--byzantine', '3', ...files, '-o', join(dir, 'x.safetensors')],
      { home },
    );
    expect(pre.code).toBe(2);
    expect(pre.stderr).toMatch(
      /^kourai: bulyan with f=3 needs n ≥ 4f\+3 \(at least 15 updates\); got 11\n {2}hint: lower --byzantine/,
    );
    writeFileSync(join(dir, 'bad.safetensors'), Buffer.from('not a safetensors file'));
    const bad = kourai(
      [
        'council',
        'aggregate',
        '--strategy',
        'fedavg',
        files[0]!,
        join(dir, 'bad.safetensors'),
        '-o',
        join(dir, 'y.safetensors'),
      ],
      { home },
    );
    expect(bad.code).toBe(5);
    expect(bad.stderr).toMatch(/bad\.safetensors: truncated or not safetensors: header length/);
    expect(
      kourai(
        [
          'council',
          'aggregate',
          '--strategy',
          'fedavg',
          join(dir, 'missing.safetensors'),
          '-o',
          join(dir, 'z.safetensors'),
        ],
        { home },
      ).code,
    ).toBe(6);
    expect(kourai(['council', 'aggregate', files[0]!, '-o', join(dir, 'z.safetensors')], { home }).code).toBe(2);
  });

  it('aggregate -o never replaces a file without --force, and never an input even with it', () => {
    const dir = join(home, 'agg-out');
    mkdirSync(dir, { recursive: true });
    const files = [0, 1, 2].map((i) => {
      const p = join(dir, `u${i}.safetensors`);
      writeFileSync(p, writeSafetensors([{ name: 'w', shape: [3], data: Float32Array.of(i, i + 1, i + 2) }]));
      return p;
    });
    const inputBytes = files.map((f) => readFileSync(f));
    const out = join(dir, 'mean.safetensors');
    writeFileSync(out, 'precious');
    const refused = kourai(['council', 'aggregate', '--strategy', 'fedavg', ...files, '-o', out], { home });
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(
      /^kourai: output file already exists: .*mean\.safetensors\n {2}hint: pass --force to replace it/,
    );
    expect(readFileSync(out, 'utf8')).toBe('precious');
    const forced = kourai(['council', 'aggregate', '--strategy', 'fedavg', ...files, '-o', out, '--force', '--json'], {
      home,
    });
    expect(forced.code, forced.stderr).toBe(0);
    expect(Array.from(readSafetensors(readFileSync(out)).tensors[0]!.data)).toEqual([1, 2, 3]);
    for (const args of [
      ['-o', files[1]!],
      ['-o', files[1]!, '--force'],
      ['--base', files[2]!, '--strategy', 'lora-fair', '-o', files[2]!, '--force'],
    ]) {
      const r = kourai(['council', 'aggregate', '--strategy', 'fedavg', ...files, ...args], { home });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/is one of the inputs/);
    }
    files.forEach((f, i) => expect(readFileSync(f).equals(inputBytes[i]!)).toBe(true));
    expect(readdirSync(dir).sort()).toEqual(['mean.safetensors', 'u0.safetensors', 'u1.safetensors', 'u2.safetensors']);
  });

  it(
    'kill -9 at any moment loses no accepted submission; a restart resumes; retries get the same answer; one aggregation',
    { timeout: 90_000 },
    async () => {
      const dir = join(home, 'c-crash');
      const names = ['athens', 'sparta', 'thebes'];
      const tokens = names.map((n) => addForge(dir, n));
      let s = await serve(dir, ['--min-forges', '3', '--strategy', 'lora-fair', '--lora-fair-steps', '100000']);
      const accepted = new Map<string, unknown>();
      const agents = ['metis', 'techne', 'kallos', 'aidos'];
      // Fire submissions and kill the server in the middle of them: as soon as one is acknowledged
      // (the kill must land after acknowledged work, or the test proves nothing).
      let killed = false;
      const kill = (): void => {
        if (!killed) s.proc.kill('SIGKILL');
        killed = true;
      };
      const pending = names.flatMap((_, i) =>
        agents.map(async (agent, a) => {
          const r = await call(
            s.url,
            'PUT',
            `/v1/rounds/1/updates/${agent}`,
            tokens[i]!,
            body(update(i * 10 + a)),
          ).catch(() => null);
          if (r && (r.status === 201 || r.status === 200)) {
            accepted.set(`${i}/${agent}`, r.json);
            kill();
          }
        }),
      );
      await Promise.all(pending);
      kill();
      await exited(s.proc);
      expect(accepted.size, 'at least one submission was acknowledged before the kill').toBeGreaterThan(0);
      s = await serve(dir, ['--min-forges', '3', '--strategy', 'lora-fair', '--lora-fair-steps', '100000']);
      // Every acknowledged submission survived; retrying any submission now gets 200 (same receipt) or 201 (it never arrived).
      for (let i = 0; i < 3; i++) {
        for (const [a, agent] of agents.entries()) {
          const r = await call(s.url, 'PUT', `/v1/rounds/1/updates/${agent}`, tokens[i]!, body(update(i * 10 + a)));
          const prior = accepted.get(`${i}/${agent}`);
          if (prior) {
            expect(r.status).toBe(200);
            expect(r.json).toEqual(prior);
          } else expect([200, 201]).toContain(r.status);
        }
      }
      // Seal everything (closing the round starts a long aggregation), kill -9 again mid-way, restart.
      for (const t of tokens) expect((await call(s.url, 'POST', '/v1/rounds/1/seal', t, {})).status).toBe(200);
      // Kill while the round is being aggregated: the precondition is observed, not assumed.
      let before = (await call(s.url, 'GET', '/v1/rounds/1', tokens[0]!)).json as {
        state: string;
        outcomes: unknown[];
      };
      while (before.state === 'open') before = (await call(s.url, 'GET', '/v1/rounds/1', tokens[0]!)).json;
      s.proc.kill('SIGKILL');
      expect(before.state, 'the round was closing (aggregating) when the council was killed').toBe('closing');
      await exited(s.proc);
      s = await serve(dir, ['--min-forges', '3', '--strategy', 'lora-fair', '--lora-fair-steps', '100000']);
      let status: { state: string; outcomes: { agent: string; aggregated: boolean; used: number }[] } = {
        state: 'closing',
        outcomes: [],
      };
      // Until the resumed aggregation is done (the test timeout bounds the wait).
      while (status.state !== 'aggregated') {
        status = (await call(s.url, 'GET', '/v1/rounds/1', tokens[0]!)).json;
        if (status.state !== 'aggregated') await new Promise((r) => setTimeout(r, 100));
      }
      expect(status.state, s.stderr()).toBe('aggregated');
      expect(status.outcomes.map((o) => [o.agent, o.aggregated, o.used])).toEqual(
        ['aidos', 'kallos', 'metis', 'techne'].map((a) => [a, true, 3]),
      );
      expect((await call(s.url, 'GET', '/v1/rounds/current', tokens[0]!)).json).toMatchObject({
        round: 2,
        state: 'open',
      });
      // graceful stop on SIGTERM
      s.proc.kill('SIGTERM');
      expect(await exited(s.proc)).toBe(0);
      expect(s.stderr()).toMatch(/council: stopped/);
      const rounds = JSON.parse(kourai(['council', 'rounds', '--data-dir', dir, '--json'], { home }).stdout) as {
        rounds: { round: number; state: string; agents: unknown[] }[];
      };
      expect(rounds.rounds.map((r) => [r.round, r.state, r.agents.length])).toEqual([
        [2, 'open', 0],
        [1, 'aggregated', 4],
      ]);
      const trust = JSON.parse(kourai(['council', 'trust', '--data-dir', dir, '--json'], { home }).stdout) as {
        forges: { rounds_scored: number }[];
      };
      expect(trust.forges.map((f) => f.rounds_scored)).toEqual([1, 1, 1]);
    },
  );
});
