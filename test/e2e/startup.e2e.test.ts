import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { kourai } from './run-bin.js';

/**
 * Start-up of the short commands measured against `kourai --version`: their usual command
 * lines import no zod (lazy options; the memoir reader loads its zod schema only for an invalid line).
 * The trace sees every ES module imported, so a static import of zod or the schema on these paths fails here.
 */
let home: string;
let memoir: string;
const line = (agent: string) =>
  `{"scene_id":"session-1.turn-1","agent":"${agent}","source":"specialist_proposed","context":null,"narrative_beat":null,"agent_proposed":"x","player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":true,"private_only":false}}\n`;

beforeAll(() => {
  home = tempDir('kourai-e2e-startup-');
  mkdirSync(join(home, 'forge'));
  memoir = join(home, 'forge', 'memoir.jsonl');
  writeFileSync(memoir, line('techne') + line('aidos'));
});
afterAll(() => removeDir(home));

function traced(args: string[]): { code: number; loaded: string; stdout: string; stderr: string } {
  const trace = join(home, 'trace.txt');
  writeFileSync(trace, '');
  const r = kourai(args, {
    home,
    env: { KOURAI_TRACE_FILE: trace },
    nodeArgs: ['--import', new URL('./fixtures/trace-loads.mjs', import.meta.url).href],
  });
  return { ...r, loaded: readFileSync(trace, 'utf8') };
}

describe('start-up paths that load no zod', () => {
  it('memoir inspect with filters (index built on the way) and score', () => {
    const insp = traced([
      'memoir',
      'inspect',
      '--memoir',
      memoir,
      '--agent',
      'aidos',
      '--split',
      'shared',
      '--limit',
      '20',
      '--json',
    ]);
    expect(insp.code).toBe(0);
    expect(JSON.parse(insp.stdout)).toMatchObject({ total: 1, shown: 1 });
    expect(insp.loaded).toContain('/dist/commands/memoir/inspect.js');
    expect(insp.loaded).not.toContain('/node_modules/zod/');
    expect(insp.loaded).not.toContain('/dist/memoir/format/schema.js');

    const score = traced(['score', '--agent', 'techne', 'a', 'b', '--json']);
    expect(score.loaded).toContain('/dist/commands/score.js');
    expect(score.loaded).not.toContain('/node_modules/zod/');
  });

  it('memoir verify of valid memoirs loads no zod', () => {
    const v = traced(['memoir', 'verify', '--memoir', memoir, '--json']);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true });
    expect(v.loaded).toContain('/dist/commands/memoir/verify.js');
    expect(v.loaded).not.toContain('/node_modules/zod/');
    expect(v.loaded).not.toContain('/dist/memoir/format/schema.js');
  });

  it('memoir verify in a home that never had an index loads only the reader: no SQLite, zod, worker threads, native locks, Ink or council', () => {
    const fresh = tempDir('kourai-e2e-startup-fresh-');
    try {
      const trace = join(fresh, 'trace.txt');
      writeFileSync(trace, '');
      const r = kourai(['memoir', 'verify', '--memoir', memoir, '--json'], {
        home: fresh,
        env: { KOURAI_TRACE_FILE: trace },
        nodeArgs: ['--import', new URL('./fixtures/trace-loads.mjs', import.meta.url).href],
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, entries: 2 });
      const loaded = readFileSync(trace, 'utf8');
      expect(loaded).toContain('/dist/memoir/verify/verify.js');
      for (const heavy of [
        '/dist/store/',
        '/dist/memoir-index/',
        'better-sqlite3',
        '/node_modules/zod/',
        '/dist/memoir/format/schema.js',
        'node:worker_threads',
        '/dist/memoir/verify/verify-threads.js',
        'fs-native-extensions',
        '/node_modules/ink/',
        '/node_modules/react/',
        '/dist/council/',
        '/dist/ui/mount.js',
      ]) {
        expect(loaded, heavy).not.toContain(heavy);
      }
    } finally {
      removeDir(fresh);
    }
  });

  it('memoir index loads no zod', () => {
    const v = traced(['memoir', 'index', '--memoir', memoir, '--rebuild', '--json']);
    expect(v.code, v.stderr).toBe(0);
    expect(v.loaded).toContain('/dist/commands/memoir/index-cmd.js');
    expect(v.loaded).not.toContain('/node_modules/zod/');
  });

  it('a bad flag still gets the schema of record and its wording', () => {
    const r = kourai(['memoir', 'inspect', '--memoir', memoir, '--agent', 'kalos'], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--agent: unknown agent "kalos"');
    const s = kourai(['score', '--agent', 'technee', 'a'], { home });
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('(did you mean "techne"?)');
  });

  it('an invalid line met while inspecting loads the schema on demand: indexed around, named by verify', () => {
    appendFileSync(memoir, line('zeus'));
    const r = kourai(['memoir', 'inspect', '--memoir', memoir, '--json'], { home });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 2 });
    expect(r.stderr).toContain('1 line of 1 memoir is not a valid entry');
    const v = kourai(['memoir', 'verify', '--memoir', memoir, '--json'], { home });
    expect(JSON.parse(v.stdout).problems[0].message).toMatch(/^agent: unknown agent "zeus"/);
  });
});
