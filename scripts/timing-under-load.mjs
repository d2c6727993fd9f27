#!/usr/bin/env node
// The timing-dependent tests under CPU load: runs them N times in a row while
// `--hogs` busy-looping processes (default 2, one per core of the CI machine) compete for the CPU,
// and stops at the first failure. The hogs are this script's own children, stopped by pid at the
// end (also on Ctrl-C). On a shared machine run it under the full-test lock:
//   flock /work/wt/.fulltest.lock node scripts/timing-under-load.mjs [--runs 20] [--hogs 2]
// The tests: the council's busy-slot and upload-deadline tests, the Ink screens driven through
// test/helpers/ink-wait.ts, and the replay playback test (replay-view.test.tsx).
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const runs = opt('--runs', 20);
const hogCount = opt('--hogs', 2);

const GROUPS = [
  {
    name: 'council busy slot / upload deadlines',
    argv: ['test/council/server.test.ts', 'test/council/hardening.test.ts', '-t', 'busy|deadline|upload'],
  },
  {
    name: 'Ink screens (ink-wait) and replay playback',
    argv: [
      'test/helpers/ink-wait.test.tsx',
      'test/ui/consent/consent-app.test.tsx',
      'test/ui/whisper/whisper-app.test.tsx',
      'test/ui/feedback/feedback-view.test.tsx',
      'test/ui/train/train-view.test.tsx',
      'test/ui/replay/replay-view.test.tsx',
    ],
  },
];

const hogs = Array.from({ length: hogCount }, () => spawn(process.execPath, ['-e', 'for(;;);'], { stdio: 'ignore' }));
const stopHogs = () => {
  for (const h of hogs.splice(0)) {
    try {
      if (h.pid) process.kill(h.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
};
process.on('exit', stopHogs);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
function runGroup(g) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [vitest, 'run', ...g.argv], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out = `${out}${d}`.slice(-20_000)));
    child.stderr.on('data', (d) => (out = `${out}${d}`.slice(-20_000)));
    child.on('close', (code) => {
      const tests = /Tests\s+(.*)/.exec(out)?.[1]?.trim() ?? '?';
      done({ ok: code === 0, tests, out });
    });
  });
}

const t0 = Date.now();
console.log(
  `timing-dependent tests under load: ${runs} runs, ${hogCount} busy-looping processes (pids ${hogs.map((h) => h.pid).join(', ')}) on ${(await import('node:os')).cpus().length} cores`,
);
let passed = 0;
outer: for (let i = 1; i <= runs; i++) {
  for (const g of GROUPS) {
    const r = await runGroup(g);
    const load = (await import('node:os')).loadavg()[0].toFixed(1);
    console.log(`run ${String(i).padStart(2)}: ${g.name}: ${r.ok ? 'pass' : 'FAIL'} (${r.tests}; load ${load})`);
    if (!r.ok) {
      console.log(r.out);
      break outer;
    }
  }
  passed = i;
}
stopHogs();
console.log(`\n${passed} of ${runs} runs passed in a row (${((Date.now() - t0) / 60_000).toFixed(1)} min)`);
process.exitCode = passed === runs ? 0 : 1;
