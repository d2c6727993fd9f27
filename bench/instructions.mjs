// The ratio targets counted in instructions (valgrind's callgrind), which do not move with
// the machine's load: on this shared host the same timed run has given the Python reader 67k/s and
// 130k/s within an hour. Opt-in (`npm run bench -- --only instructions`, ~10 minutes: valgrind runs
// programs ~50x slower). Counts are user-space instructions of every thread: fsync and the disk are not
// in them, and one instruction of JIT code and one of CPython's interpreter need not take equal time,
// so these are a repeatable second figure beside the timed ratios, not a replacement for them.
// Each side is also counted on a one-entry input; the difference is what the 100k entries cost
// beyond start-up and imports (the analogue of the timed in-process figures).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PY_REF, hasRef, pyReader, pyWriter } from './memoir.mjs';
import { BIN, ROOT, cleanup, tempDir } from './lib.mjs';

const N = 100_000;

export async function run(report) {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    report('instruction counts', 'skipped', '', 'valgrind is not installed');
    return;
  }
  if (!hasRef) {
    report('instruction counts', 'skipped', '', 'memoir_ref.py not found (../shared/reference/python)');
    return;
  }
  const dir = tempDir('kourai-bench-instr-');
  let runs = 0;
  /** Instructions callgrind counted for one whole process (all its threads). */
  const count = (cmd, args, env = {}) => {
    const out = join(dir, `callgrind-${runs++}.out`);
    const r = spawnSync('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, cmd, ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env: { ...process.env, ...env, CI: '1' },
    });
    rmSync(out, { force: true });
    const m = /Collected\s*:\s*(\d+)/.exec(r.stderr);
    if ((r.status !== 0 && r.status !== 1) || !m)
      throw new Error(`callgrind ${cmd} ${args[0]} failed (${r.status}): ${r.stderr.slice(-300)}`);
    return Number(m[1]);
  };
  // Without this V8 may finish optimised code late or never in a run under valgrind (one index build
  // counted 5.8 G instead of ~3 G): compiling on the main thread makes the counts repeatable.
  const NODE = [process.execPath, '--no-concurrent-recompilation'];
  const node = (code, env) => count(NODE[0], [NODE[1], '--input-type=module', '-e', code], env);
  // the interpreter itself: python3 may be a shell shim (pyenv) that valgrind would count instead
  const python3 = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim();
  const py = (code) => count(python3, ['-c', code]);
  const G = (x) => x / 1e9;
  try {
    // --- inputs: a 100k memoir and a one-line one; 100k append inputs and one
    const big = join(dir, 'm100k', 'memoir.jsonl');
    const synth = spawnSync(
      process.execPath,
      [BIN, 'memoir', 'synth', '--out', big, '--entries', String(N), '--json'],
      { env: { ...process.env, KOURAI_HOME: dir } },
    );
    if (synth.status !== 0) throw new Error(`memoir synth failed: ${synth.stderr}`);
    const lines = readFileSync(big, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const one = join(dir, 'm1', 'memoir.jsonl');
    mkdirSync(join(dir, 'm1'));
    writeFileSync(one, `${lines[0]}\n`);
    const rows = lines.map((l) => {
      const v = JSON.parse(l);
      delete v.entry_id;
      delete v.recorded_at;
      return JSON.stringify(v);
    });
    const inBig = join(dir, 'in-100k.ndjson');
    const inOne = join(dir, 'in-1.ndjson');
    writeFileSync(inBig, rows.join('\n'));
    writeFileSync(inOne, rows[0]);

    // --- verify of a memoir never indexed (a fresh home each time) vs the upstream reader
    let homes = 0;
    const verify = (file) =>
      count(NODE[0], [NODE[1], BIN, 'memoir', 'verify', '--memoir', file, '--json'], {
        KOURAI_HOME: join(dir, `home-${homes++}`),
      });
    const kv = verify(big);
    const kv1 = verify(one);
    const pv = py(pyReader(PY_REF, big));
    const pv1 = py(pyReader(PY_REF, one));
    report(
      '[100k] verify, never indexed (whole process): instructions',
      G(kv),
      'G',
      `one-entry memoir ${G(kv1).toFixed(2)} G`,
    );
    report(
      '  upstream Python reader (whole process): instructions',
      G(pv),
      'G',
      `one-entry memoir ${G(pv1).toFixed(2)} G`,
    );
    report('  (3) by instructions: whole process vs whole process', pv / kv, 'x', 'timed target >= 3.5x');
    report(
      '  (2) by instructions: the 100k entries beyond start-up',
      (pv - pv1) / (kv - kv1),
      'x',
      `${((kv - kv1) / (N - 1)).toFixed(0)} vs ${((pv - pv1) / (N - 1)).toFixed(0)} instructions per entry; timed target >= 3.5x`,
    );

    // --- batch append (batches of 10k, as the timed figure) vs the upstream writer; both sides parse
    // the same ndjson input first
    const memoirJs = pathToFileURL(join(ROOT, 'dist', 'memoir', 'file', 'memoir.js')).href;
    const append = (input, out) =>
      node(`
const { readFileSync } = await import('node:fs');
const { Memoir } = await import(${JSON.stringify(memoirJs)});
const rows = readFileSync(${JSON.stringify(input)}, 'utf8').split('\\n').map((l) => JSON.parse(l));
const m = new Memoir(${JSON.stringify(out)});
for (let i = 0; i < rows.length; i += 10000) m.append(rows.slice(i, i + 10000));`);
    const ka = append(inBig, join(dir, 'a-big', 'memoir.jsonl'));
    const ka1 = append(inOne, join(dir, 'a-one', 'memoir.jsonl'));
    const pa = py(pyWriter(PY_REF, inBig, join(dir, 'py-big.jsonl')));
    const pa1 = py(pyWriter(PY_REF, inOne, join(dir, 'py-one.jsonl')));
    report(
      'append 100k entries (in a fresh node, input parsed first): instructions',
      G(ka),
      'G',
      `one entry ${G(ka1).toFixed(2)} G`,
    );
    report('  upstream Python writer (whole process): instructions', G(pa), 'G', `one entry ${G(pa1).toFixed(2)} G`);
    report(
      '  append by instructions: the 100k entries beyond start-up',
      (pa - pa1) / (ka - ka1),
      'x',
      `${((ka - ka1) / (N - 1)).toFixed(0)} vs ${((pa - pa1) / (N - 1)).toFixed(0)} instructions per entry; timed target >= 3x (fsync not counted)`,
    );

    // --- index build: its target is a rate, which instructions cannot give; the per-entry count is
    // printed so that a change can be compared across runs and machines
    const index = (file) =>
      count(NODE[0], [NODE[1], BIN, 'memoir', 'index', '--memoir', file, '--json'], {
        KOURAI_HOME: join(dir, `home-${homes++}`),
      });
    const ki = index(big);
    const ki1 = index(one);
    report(
      '[100k] index build from scratch (whole process): instructions',
      G(ki),
      'G',
      `${((ki - ki1) / (N - 1)).toFixed(0)} per entry beyond a one-entry build (${G(ki1).toFixed(2)} G)`,
    );
  } finally {
    cleanup(dir);
  }
}
