import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { kourai } from './run-bin.js';

const reader = fileURLToPath(new URL('../fixtures/python/trl_dpo_reader.py', import.meta.url));

let home: string;
beforeAll(() => {
  home = tempDir('kourai-e2e-export-');
});
afterAll(() => removeDir(home));

describe('kourai memoir export --format trl-dpo (the built binary)', () => {
  it('synth --sessions 8, then export: files a TRL-style loader reads; --include-private warns on stderr', () => {
    expect(kourai(['memoir', 'synth', '--sessions', '8'], { home }).code).toBe(0);
    const r = kourai(['memoir', 'export', '--format', 'trl-dpo', '--out', join(home, 'dpo'), '--json'], { home });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout) as { files: { agent: string; path: string; records: number }[]; records: number };
    expect(doc.records).toBeGreaterThan(0);
    const py = spawnSync('python3', [reader, ...doc.files.map((f) => f.path)], { encoding: 'utf8' });
    expect(py.stderr).toBe('');
    expect(py.status).toBe(0);
    expect(
      py.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { rows: number }).rows),
    ).toEqual(doc.files.map((f) => f.records));
    expect(readFileSync(doc.files[0]?.path as string, 'utf8')).not.toContain('\nTask: ');

    const p = kourai(['memoir', 'export', '--format', 'trl-dpo', '--out', join(home, 'all'), '--include-private'], {
      home,
    });
    expect(p.code).toBe(0);
    expect(p.stderr).toMatch(/^warning: --include-private: /m);
    expect(p.stdout).toMatch(/^wrote \d+ preference pairs in TRL's DPO format to /);
  });

  it('bad input: one line on stderr, exit 2', () => {
    const r = kourai(['memoir', 'export', '--format', 'trl-dpo', '--agent', 'puck'], { home });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')[0]).toMatch(/--agent puck: puck is bond-only/);
  });
});
