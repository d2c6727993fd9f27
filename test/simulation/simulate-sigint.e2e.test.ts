import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, cleanEnv } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

// The real binary, a real SIGINT: the cells that finished stay in cells.ndjson (whole lines), the
// process exits 130 and says how many cells it kept and where.
describe('kourai federate simulate: Ctrl-C on the binary', () => {
  const home = tempDir('kourai-sim-sigint-');
  afterAll(() => removeDir(home));

  it('exits 130 after SIGINT and keeps every finished cell', async () => {
    assertBuilt();
    const args = [
      'federate',
      'simulate',
      '--forges',
      '5',
      '--byzantine',
      '1',
      '--rounds',
      '2',
      '--seeds',
      '1',
      '--strategies',
      'multikrum+lora-fair',
      '--attacks',
      'none,collude,sign-flip',
      '--epsilons',
      'inf',
      '--held-out',
      '20',
      '--sessions',
      '3',
      '--turns',
      '8',
      '--cold-start',
      'none',
      '--json',
    ];
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: home,
      env: cleanEnv(home),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const cellsFile = (): string | null => {
      const dir = join(home, 'simulations');
      if (!existsSync(dir)) return null;
      const id = readdirSync(dir)[0];
      return id && existsSync(join(dir, id, 'cells.ndjson')) ? join(dir, id, 'cells.ndjson') : null;
    };
    // Wait for an observable condition (a finished cell on disk), then interrupt.
    const poll = setInterval(() => {
      const f = cellsFile();
      if (f && readFileSync(f, 'utf8').includes('\n') && !child.killed) child.kill('SIGINT');
    }, 50);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearInterval(poll);
    expect(code, err).toBe(130);
    const m = /simulation cancelled: (\d+) of (\d+) cells finished, kept in (\S+cells\.ndjson)/.exec(err);
    expect(m, err).not.toBeNull();
    const lines = readFileSync(m?.[3] as string, 'utf8')
      .split('\n')
      .filter(Boolean);
    expect(lines.length).toBe(Number(m?.[1]));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThan(Number(m?.[2]));
    for (const l of lines) expect(JSON.parse(l)).toMatchObject({ result: { key: expect.any(String) } });
  }, 180_000);
});
