import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerExecArgv } from '../../src/runtime/worker-start.js';
import { assertBuilt, ROOT } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * Worker threads inherit the node flags of the process by default, and `node --input-type=module
 * -e …` (how the bench, and anyone scripting kourai, runs it in-process) makes a worker fail to
 * start. Each kind of worker is started here from such a process, with the built code; before
 * startWorker, every one of these failed (ERR_INPUT_TYPE_NOT_ALLOWED, or "require is not defined
 * in ES module scope" for the Gram pool's CommonJS source). The verify workers have the same test
 * in test/memoir/verify/verify-split.test.ts.
 */
/** A bound for liveness (a node process started per test; slow on a loaded machine), never a measurement. */
const SPAWNED = 150_000;
const dir = tempDir();
afterAll(() => removeDir(dir));
beforeAll(() => assertBuilt());

const lib = (path: string): string => JSON.stringify(pathToFileURL(join(ROOT, 'dist', path)).href);

/** Runs `code` (ES module text) as `node --input-type=module --no-warnings -e code`; its last stdout line is JSON. */
function runFlagged(code: string): { stderr: string; result: unknown } {
  const r = spawnSync(process.execPath, ['--input-type=module', '--no-warnings', '-e', code], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  let result: unknown = null;
  try {
    result = JSON.parse(last);
  } catch {
    result = { stdout: r.stdout, status: r.status };
  }
  return { stderr: r.stderr, result };
}

describe('workerExecArgv: the node flags a worker keeps', () => {
  it(
    'keeps the boolean flags that change how warnings and errors are reported, drops the rest',
    () => {
      const parent = [
        '--input-type=module',
        '-e',
        'await import("x")',
        '--import',
        './hook.mjs',
        '--max-old-space-size=100',
        '--no-warnings',
        '--enable-source-maps',
        '--conditions',
        'dev',
        '--trace-uncaught',
      ];
      expect(workerExecArgv(parent)).toEqual(['--no-warnings', '--enable-source-maps', '--trace-uncaught']);
      expect(workerExecArgv([])).toEqual([]);
    },
    SPAWNED,
  );

  it(
    'a flag it keeps reaches the worker; an entry flag does not',
    () => {
      const { stderr, result } = runFlagged(`const { startWorker } = await import(${lib('runtime/worker-start.js')});
const w = startWorker({ source: "require('node:worker_threads').parentPort.postMessage(process.execArgv)" });
const got = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
await w.terminate();
console.log(JSON.stringify(got));`);
      expect(stderr).toBe('');
      expect(result).toEqual(['--no-warnings']);
    },
    SPAWNED,
  );
});

describe('every kind of worker starts from `node --input-type=module -e`', () => {
  it(
    'index build and lazy full-text build (index-worker)',
    () => {
      const file = join(dir, 'big.jsonl');
      const lines = synthLines(5, 14_000); // over 8 MiB: a bulk load, parsed in a worker
      writeFileSync(file, `${lines.join('\n')}\n`);
      const { stderr, result } = runFlagged(`const { openIndex } = await import(${lib('memoir-index/memoir-index.js')});
const index = openIndex(${JSON.stringify(join(dir, 'home'))});
const [r] = await index.build([${JSON.stringify(file)}]);
const deferred = index.withoutFullText().length;
await index.buildFullText();
const left = index.withoutFullText().length;
const hits = index.db.prepare("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'plan*'").pluck().get();
index.close();
console.log(JSON.stringify({ parallel: r.parallel, entries: r.newEntries, deferred, left, hits: hits > 0 }));`);
      expect(stderr).toBe('');
      expect(result).toEqual({ parallel: true, entries: lines.length, deferred: 1, left: 0, hits: true });
    },
    SPAWNED,
  );

  it(
    'council aggregation (aggregate-worker): the worker answers from council.db',
    () => {
      const dataDir = join(dir, 'council');
      const { stderr, result } =
        runFlagged(`const { SqliteCouncilStorage } = await import(${lib('council/sqlite-storage.js')});
const { WorkerAggregator } = await import(${lib('council/worker-aggregator.js')});
new SqliteCouncilStorage(${JSON.stringify(dataDir)}).close();
const wa = new WorkerAggregator({ dataDir: ${JSON.stringify(dataDir)}, threads: 2, trustTolerance: 0 });
const message = await wa.aggregator(() => new Date(0))(1, 'metis', { strategy: 'fedavg', f: 0 }).then(() => 'resolved', (e) => e.message);
await wa.close();
console.log(JSON.stringify(message));`);
      expect(stderr).toBe('');
      // An empty council.db has no layout: the message is the worker's own, read from the database.
      expect(result).toBe(
        'aggregation failed in the worker: council.db: no layout for metis in round 1, which has updates for it',
      );
    },
    SPAWNED,
  );

  it(
    'training (train-worker)',
    () => {
      const { stderr, result } = runFlagged(`const { TrainerWorker } = await import(${lib('train/train-in-worker.js')});
const { builtinBaseSpec } = await import(${lib('train/base-spec.js')});
const { DEFAULT_SETTINGS } = await import(${lib('train/trainer.js')});
const w = new TrainerWorker(new AbortController().signal);
const out = await w.train(builtinBaseSpec(), { agent: 'techne', kind: 'bond', examples: [], settings: DEFAULT_SETTINGS, start: null, frozen: [] }).then((o) => o.status, (e) => e.message);
await w.close();
console.log(JSON.stringify(out));`);
      expect(stderr).toBe('');
      expect(result).toBe('skipped'); // no examples: the worker's answer
    },
    SPAWNED,
  );

  it(
    'the Gram pool (CommonJS source run in workers): same distances as one thread',
    () => {
      const { stderr, result } = runFlagged(`const { GramPool } = await import(${lib('aggregation/gram-pool.js')});
const { pairwiseSquaredDistances } = await import(${lib('aggregation/pairwise-distances.js')});
const pool = await GramPool.create(2);
if (pool === null) { console.log(JSON.stringify('no SIMD')); process.exit(0); }
const rows = Array.from({ length: 6 }, (_, i) => Float32Array.from({ length: 20000 }, (_, j) => Math.sin(i * 7 + j)));
const one = pairwiseSquaredDistances(rows).d2;
const many = pairwiseSquaredDistances(rows, { pool, poolMinRows: 1 }).d2;
await pool.close();
console.log(JSON.stringify(Array.from(one).every((v, k) => Math.abs(v - many[k]) <= 1e-9 * Math.max(1, Math.abs(v))) ? 'same' : 'differ'));`);
      expect(stderr).toBe('');
      expect(result).toBe('same');
    },
    SPAWNED,
  );
});
