#!/usr/bin/env node
// The mutation check: applies each planted bug of scripts/mutants.mjs alone, in a copy of the tree
// (the checkout is never modified, even if this is killed), and runs the tests that should catch
// it. A catch counts only when the failing tests pass again without the mutant (a loaded machine
// fails tests on its own); with --whole-suite, a mutant the listed tests miss is also run against the
// whole suite, built, before it counts as surviving.
// A mutant whose pattern no longer matches is STALE: reported, and the check fails.
//   npm run mutants                     every mutant
//   npm run mutants -- --only id,id     some of them (globs: --only 'scan-*,verify-*')
//   npm run mutants -- --list           the list, with stale ones marked
//   npm run mutants -- --json out.json  also write the results
//   npm run mutants -- --whole-suite    survivors also face the whole suite (much slower)
// Exit 0 only when every mutant was caught and none is stale. Not part of `npm test` (it runs the
// tests once per mutant: about 20–40 minutes on two cores).
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectMutants } from './mutant-select.mjs';
import { MUTANTS } from './mutants.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = opt('--only');
const wholeSuite = args.includes('--whole-suite');
const selection =
  only === undefined
    ? undefined
    : selectMutants(
        only,
        MUTANTS.map((m) => m.id),
      );
if (selection && selection.unmatched.length) {
  console.error(`mutation check: no mutant matches ${selection.unmatched.join(', ')} (see --list)`);
  process.exit(2);
}
const chosen = selection ? MUTANTS.filter((m) => selection.chosen.includes(m.id)) : MUTANTS;
const say = (s) => process.stderr.write(`${s}\n`);

// 1. Stale patterns: a mutant that can no longer be applied is a failure of the check, not a skip.
const occurrences = (m) => {
  try {
    return readFileSync(join(root, m.file), 'utf8').split(m.find).length - 1;
  } catch {
    return -1;
  }
};
const stale = chosen.filter((m) => occurrences(m) !== 1);
if (args.includes('--list')) {
  for (const m of chosen)
    console.log(
      `${stale.includes(m) ? 'STALE ' : '      '}${m.id.padEnd(30)} ${m.file}: ${m.bug}${m.planted ? ' (planted by a review)' : ''}`,
    );
  process.exit(stale.length ? 1 : 0);
}
for (const m of stale) {
  const n = occurrences(m);
  say(
    `STALE ${m.id}: ${n < 0 ? `${m.file} is gone` : `its pattern occurs ${n} times in ${m.file} (expected once)`}; update scripts/mutants.mjs`,
  );
}
const runnable = chosen.filter((m) => !stale.includes(m));

// 2. A private copy of the tree; node_modules is shared (read-only use).
const env = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
const work = mkdtempSync(join(tmpdir(), 'kourai-mutants-'));
chmodSync(work, 0o755); // some tests run the binary as an unprivileged user, who must read the copy
const cleanup = () => rmSync(work, { recursive: true, force: true });
let current; // the test run in progress
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    const stop = () => {
      cleanup();
      process.exit(130);
    };
    if (!current) stop();
    current?.on('close', stop);
    current?.kill('SIGTERM');
  });
}
/** Runs a command in the copy to its end (asynchronously, so Ctrl-C can stop it and clean up). */
function exec(argv) {
  return new Promise((done) => {
    const child = spawn(process.execPath, argv, { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    current = child;
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d) => (stderr = `${stderr}${d}`.slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGTERM'), 30 * 60_000);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      current = undefined;
      done({ status, signal, stderr });
    });
  });
}
for (const p of [
  'src',
  'test',
  'docs', // tests read documented snippets (the Python lock in docs/memoir.md)
  'bin',
  'README.md',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'vitest.config.ts',
])
  cpSync(join(root, p), join(work, p), { recursive: true });
symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'dir');

const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
/** Runs vitest in the copy; returns the failed tests (file > full name) from its JSON report. */
async function runTests(paths, extra = []) {
  const report = join(work, '.mutants-report.json');
  rmSync(report, { force: true });
  const r = await exec([vitest, 'run', '--reporter=json', `--outputFile=${report}`, ...extra, ...paths]);
  let failed = [];
  const why = new Map(); // failed test -> the first line of its failure, for the log
  try {
    const j = JSON.parse(readFileSync(report, 'utf8'));
    failed = j.testResults.flatMap((f) =>
      f.assertionResults.filter((a) => a.status === 'failed').map((a) => `${relative(work, f.name)} > ${a.fullName}`),
    );
    for (const f of j.testResults)
      for (const a of f.assertionResults)
        if (a.status === 'failed')
          why.set(`${relative(work, f.name)} > ${a.fullName}`, firstLine(a.failureMessages?.[0]));
    // a file that failed to load or whose hooks failed has no failed assertion: count the file
    for (const f of j.testResults)
      if (f.status === 'failed' && !failed.some((x) => x.startsWith(`${relative(work, f.name)} >`)))
        failed.push(`${relative(work, f.name)} (${(f.message ?? 'failed').split('\n')[0]})`);
  } catch {
    if (r.status !== 0)
      failed = [
        `vitest exited ${r.status}${r.signal ? ` (${r.signal})` : ''}: ${`${r.stderr}`.trim().split('\n').slice(-3).join(' | ')}`,
      ];
  }
  return {
    ok: r.status === 0 && failed.length === 0,
    failed,
    reasons: failed.map((f) => (why.has(f) ? `${f}: ${why.get(f)}` : f)),
  };
}
/** The first line of a failure message (why it failed: an assertion, a timeout, a counterexample). */
function firstLine(m) {
  return (m ?? 'failed').split('\n')[0].slice(0, 300);
}
async function build() {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  // a mutant may not type-check; tsc still emits, which is all the end-to-end tests need
  await exec([tsc, '-p', 'tsconfig.build.json']);
}

const results = [];
let suiteBaseline; // failures of the whole suite in this copy without any mutant (computed once, if needed)
try {
  // 3. The tests must pass unmutated, or a "caught" mutant means nothing.
  const targeted = [...new Set(runnable.flatMap((m) => m.tests))];
  await build(); // some tests drive the built library (dist/)
  if (runnable.length) {
    say(`baseline: ${targeted.join(' ')}`);
    const base = await runTests(targeted);
    if (!base.ok) {
      say(`the tests fail without any mutant; fix them first:\n  ${base.reasons.join('\n  ')}`);
      process.exitCode = 1;
      throw new Error('baseline failed');
    }
  }
  // 4. One mutant at a time. A failure counts as a catch only when the failing tests pass again
  //    without the mutant (a loaded machine can fail a test on its own); otherwise it is retried once.
  for (const m of runnable) {
    const path = join(work, m.file);
    const original = readFileSync(path, 'utf8');
    const mutate = () => writeFileSync(path, original.replace(m.find, m.replace));
    const restore = () => writeFileSync(path, original);
    let outcome = 'survived';
    let by = [];
    let where = m.tests.join(' ');
    try {
      for (let attempt = 0; attempt < 2 && outcome !== 'caught'; attempt++) {
        mutate();
        const r = await runTests(m.tests, ['--bail', '1']);
        restore();
        if (r.ok) break;
        const files = [...new Set(r.failed.map((f) => f.split(' > ')[0].split(' (')[0]))].slice(0, 3);
        const again = await runTests(files);
        if (again.ok) {
          outcome = 'caught';
          by = r.failed;
        } else {
          outcome = 'inconclusive';
          by = r.failed;
          say(
            `  ${m.id}: ${files.join(' ')} also fails without the mutant (${again.reasons[0] ?? ''}); ${attempt === 0 ? 'retrying' : 'giving up'}`,
          );
        }
      }
      if (outcome === 'survived' && wholeSuite) {
        say(`${m.id}: not caught by ${where}; running the whole suite (built)`);
        if (!suiteBaseline) {
          suiteBaseline = new Set((await runTests([])).failed); // what fails here without any mutant is not a catch
          if (suiteBaseline.size)
            say(
              `  the whole suite fails here without any mutant (not counted):\n    ${[...suiteBaseline].join('\n    ')}`,
            );
        }
        mutate();
        await build();
        by = (await runTests([])).failed.filter((f) => !suiteBaseline.has(f));
        restore();
        await build();
        where = 'the whole suite';
        if (by.length) outcome = 'caught';
      }
    } finally {
      restore();
    }
    results.push({
      id: m.id,
      file: m.file,
      bug: m.bug,
      planted: Boolean(m.planted),
      outcome,
      caught: outcome === 'caught',
      by,
    });
    const label = { caught: 'caught      ', survived: 'SURVIVED    ', inconclusive: 'INCONCLUSIVE' }[outcome];
    say(
      `${label} ${m.id}${outcome === 'caught' ? `  by ${by[0]}${by.length > 1 ? ` and ${by.length - 1} more` : ''}` : outcome === 'survived' ? ` (${where} pass with it)` : ''}`,
    );
  }
} catch (err) {
  if (err.message !== 'baseline failed') throw err;
} finally {
  cleanup();
}
if (process.exitCode) process.exit(process.exitCode);

// 5. The score.
const caught = results.filter((r) => r.caught).length;
const total = results.length + stale.length;
console.log(
  `\nmutation check: ${caught} of ${total} mutants caught${stale.length ? `, ${stale.length} STALE (pattern gone: the check fails until scripts/mutants.mjs is updated)` : ''}`,
);
for (const r of results.filter((x) => !x.caught))
  console.log(`  ${r.outcome.toUpperCase()} ${r.id} (${r.file}): ${r.bug}`);
for (const m of stale) console.log(`  STALE    ${m.id} (${m.file})`);
const json = opt('--json');
if (json)
  writeFileSync(json, `${JSON.stringify({ caught, total, stale: stale.map((m) => m.id), results }, null, 1)}\n`);
process.exit(caught === total ? 0 : 1);
