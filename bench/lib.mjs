// Shared helpers for benchmark suites: child processes with peak memory, medians, temp dirs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'kourai.js');
const RSS_HOOK = fileURLToPath(new URL('./rss-hook.mjs', import.meta.url));

export function tempDir(prefix = 'kourai-bench-') {
  const base = join(ROOT, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base, prefix));
}
export const cleanup = (d) => rmSync(d, { recursive: true, force: true });

/**
 * Runs the real binary; returns wall seconds, CPU seconds (user + system: what the run cost,
 * nearly independent of how loaded the machine is), exit code, stdout and peak RSS in MB.
 */
export function kourai(args, { home, input, env } = {}) {
  const rssFile = join(tmpdir(), `kourai-rss-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const cpuFile = `${rssFile}-cpu`;
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', RSS_HOOK, BIN, ...args], {
    input: input ?? '',
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    env: {
      ...process.env,
      ...env,
      KOURAI_HOME: home ?? process.env.KOURAI_HOME,
      KOURAI_RSS_FILE: rssFile,
      KOURAI_CPU_FILE: cpuFile,
      CI: '1',
    },
  });
  const seconds = (performance.now() - t0) / 1000;
  let rssMB = NaN;
  let cpuSeconds = NaN;
  try {
    rssMB = Number(readFileSync(rssFile, 'utf8')) / 1024;
    cpuSeconds = Number(readFileSync(cpuFile, 'utf8')) / 1e6;
    rmSync(rssFile);
    rmSync(cpuFile);
  } catch {}
  if (r.status !== 0 && r.status !== 1) throw new Error(`kourai ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return { seconds, cpuSeconds, code: r.status, stdout: r.stdout, stderr: r.stderr, rssMB };
}

/** CPU seconds (user + system) this process spent in fn, and the wall seconds. */
export function cpuTimed(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const out = fn();
  const c = process.cpuUsage(c0);
  return { out, seconds: (performance.now() - t0) / 1000, cpuSeconds: (c.user + c.system) / 1e6 };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export function timeIt(fn, reps = 5) {
  const ts = [];
  let out;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    out = fn();
    ts.push(performance.now() - t0);
  }
  return { ms: median(ts), out };
}

export function python(code, input) {
  const r = spawnSync('python3', ['-c', code], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) return { ok: false, error: r.stderr || r.error?.message };
  return { ok: true, out: r.stdout };
}

export { writeFileSync };
