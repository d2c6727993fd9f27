// Simulation benchmarks (issue 11): the wall time of the documented default experiment
// (`kourai federate simulate`, the whole process) and simulated forge-rounds per second.
// --quick runs a small configuration instead (5 forges, 2 rounds, one seed) to show the rate.
// Contract: export async function run(report, { quick }). Uses the built binary.
// Standalone: node bench/simulation.mjs [--quick]
import { pathToFileURL } from 'node:url';
import { cleanup, kourai, tempDir } from './lib.mjs';

const SMALL = ['--forges', '5', '--byzantine', '1', '--rounds', '2', '--seeds', '1', '--strategies', 'fedavg,multikrum+lora-fair', '--attacks', 'none,sign-flip', '--epsilons', 'inf'];

export async function run(report, { quick = false } = {}) {
  const home = tempDir('sim-');
  try {
    const args = ['federate', 'simulate', '--json', ...(quick ? SMALL : [])];
    const r = kourai(args, { home });
    if (r.code !== 0) throw new Error(`federate simulate exited ${r.code}: ${r.stderr?.slice(-500)}`);
    const out = JSON.parse(r.stdout);
    const label = quick ? 'small experiment (5 forges, 2 rounds, 1 seed)' : 'default experiment';
    report(`simulate: ${label}, whole process`, r.seconds, 's', `${out.summary.cells.total} cells, peak ${r.rssMB.toFixed(0)} MB`);
    report(`simulate: ${label}, simulated forge-rounds per second`, out.bench.forge_rounds_per_second, 'forge-rounds/s', `${out.bench.forge_rounds} forge-rounds (train + clip/noise + submit + aggregate + measure)`);
    const missed = out.targets.filter((t) => !t.met).map((t) => t.name);
    report(`simulate: ${label}, targets met`, `${out.targets.length - missed.length}/${out.targets.length}`, '', missed.length ? `missed: ${missed.join('; ')}` : '');
  } finally {
    cleanup(home);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run((name, value, unit, note = '') => console.log(`${name.padEnd(62)} ${String(typeof value === 'number' ? value.toFixed(2) : value).padStart(12)} ${unit.padEnd(14)} ${note}`), { quick: process.argv.includes('--quick') });
}
