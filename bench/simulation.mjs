// Simulation benchmarks: `kourai federate simulate` as a whole process — wall time, CPU time,
// simulated forge-rounds per second and peak memory — for the documented default experiment and
// for the experiment at scale, bounded: 1,000 forges, cohorts of 100, ε 4 and ∞, one seed, the
// reference strategy under no attack and under collusion, 2 rounds (the full at-scale command,
// `--forges 1000 --cohort 100 --epsilons 4,inf`, runs the whole Byzantine grid for 4 rounds; its
// recorded figures are in docs/evaluation.md). --quick runs small configurations of both instead
// (to show the rates in a minute). The load average is printed beside them: the machine is shared,
// so wall times are comparable only within one run; CPU seconds per forge-round much less so.
// Contract: export async function run(report, { quick }). Uses the built binary.
// Standalone: node bench/simulation.mjs [--quick]
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { cleanup, kourai, tempDir } from './lib.mjs';

const SMALL = [
  '--forges',
  '5',
  '--byzantine',
  '1',
  '--rounds',
  '2',
  '--seeds',
  '1',
  '--strategies',
  'fedavg,multikrum+lora-fair',
  '--attacks',
  'none,sign-flip',
  '--epsilons',
  'inf',
];
const SCALE = [
  '--forges',
  '1000',
  '--cohort',
  '100',
  '--rounds',
  '2',
  '--seeds',
  '1',
  '--strategies',
  'multikrum+lora-fair',
  '--attacks',
  'none,collude',
  '--epsilons',
  '4,inf',
  '--personal-sample',
  '4',
];
const SCALE_QUICK = [
  '--forges',
  '200',
  '--cohort',
  '20',
  '--byzantine',
  '0',
  '--rounds',
  '2',
  '--seeds',
  '1',
  '--strategies',
  'multikrum+lora-fair',
  '--attacks',
  'none',
  '--epsilons',
  '4,inf',
  '--personal-sample',
  '4',
];

export async function run(report, { quick = false } = {}) {
  const runs = quick
    ? [
        ['small experiment (5 forges, 2 rounds, 1 seed)', SMALL],
        ['small experiment at scale (200 forges, cohorts of 20, 2 rounds)', SCALE_QUICK],
      ]
    : [
        ['default experiment', []],
        ['at scale, bounded (1,000 forges, cohorts of 100, ε 4,∞, 2 rounds, 1 seed)', SCALE],
      ];
  for (const [label, flags] of runs) {
    const home = tempDir('sim-');
    try {
      const load = loadavg()[0];
      const r = kourai(['federate', 'simulate', '--json', ...flags], { home });
      if (r.code !== 0) throw new Error(`federate simulate exited ${r.code}: ${r.stderr?.slice(-500)}`);
      const out = JSON.parse(r.stdout);
      const loadNote = `load ${load.toFixed(1)} → ${loadavg()[0].toFixed(1)}`;
      report(
        `simulate: ${label}, whole process`,
        r.seconds,
        's',
        `${out.summary.cells.total} cells, ${out.bench.threads} worker threads, ${loadNote}`,
      );
      report(
        `simulate: ${label}, forge-rounds per second`,
        out.bench.forge_rounds_per_second,
        'forge-rounds/s',
        `${out.bench.forge_rounds} forge-rounds (train + clip/noise + submit + aggregate + measure)`,
      );
      report(
        `simulate: ${label}, CPU seconds per forge-round`,
        r.cpuSeconds / Math.max(1, out.bench.forge_rounds),
        's',
        `${r.cpuSeconds.toFixed(0)} CPU s (user + system, all threads)`,
      );
      report(
        `simulate: ${label}, peak memory`,
        r.rssMB,
        'MB',
        'peak resident set of the process and its worker threads',
      );
      const missed = out.targets.filter((t) => !t.met).map((t) => t.name);
      report(
        `simulate: ${label}, targets met`,
        `${out.targets.length - missed.length}/${out.targets.length}`,
        '',
        missed.length ? `missed: ${missed.join('; ')}` : '',
      );
    } finally {
      cleanup(home);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run(
    (name, value, unit, note = '') =>
      console.log(
        `${name.padEnd(62)} ${String(typeof value === 'number' ? value.toFixed(2) : value).padStart(12)} ${unit.padEnd(14)} ${note}`,
      ),
    { quick: process.argv.includes('--quick') },
  );
}
