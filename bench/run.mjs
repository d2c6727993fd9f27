#!/usr/bin/env node
// npm run bench [-- --quick] [-- --only memoir,privacy,council]
// npm run bench -- --only instructions   (opt-in: the ratios counted by valgrind, ~10 min)
// npm run bench -- --only council-scale  (opt-in: 1,000 forges, two council processes on PostgreSQL, kill -9)
// Prints every performance figure the issues name, as numbers and as ratios against baselines
// measured on the same machine in the same run (the machines are shared and noisy).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg =
  args.find((a) => a.startsWith('--only='))?.slice(7) ??
  (args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined);
const only = onlyArg ? new Set(onlyArg.split(',')) : undefined;
const suites = [
  'memoir',
  'memory',
  'replay',
  'privacy',
  'council',
  'learndata',
  'simulation',
  'federation',
  'train',
  'learn-real',
  'route',
  'instructions',
  'council-scale',
];
// run only when named in --only
const optIn = new Set(['instructions', 'council-scale']);
const unknown = [...(only ?? [])].filter((s) => !suites.includes(s));
if (unknown.length) {
  console.error(`bench: no suite named ${unknown.join(', ')} (suites: ${suites.join(', ')})`);
  process.exit(2);
}

const rows = [];
function report(name, value, unit, note = '') {
  const v =
    typeof value === 'number'
      ? Math.abs(value) >= 100
        ? value.toFixed(0)
        : Math.abs(value) >= 1
          ? value.toFixed(2)
          : value.toPrecision(3)
      : String(value);
  rows.push({ name, value, unit, note });
  console.log(`${name.padEnd(62)} ${v.padStart(12)} ${unit.padEnd(10)} ${note}`);
}

console.log(`kourai benchmarks — node ${process.version}, ${quick ? 'quick (100k only)' : 'full'}\n`);
for (const s of suites) {
  if (only ? !only.has(s) : optIn.has(s)) continue;
  const file = fileURLToPath(new URL(`./${s}.mjs`, import.meta.url));
  if (!existsSync(file)) continue;
  console.log(`\n## ${s}`);
  const mod = await import(file);
  await mod.run(report, { quick });
}
console.log(`\n${rows.length} figures`);
