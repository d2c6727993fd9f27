// Memory benchmarks: search, replay buffer, episodes and revision chains on a synthetic memoir.
// Usage (after `npm run build`): wired by bench/run.mjs, or `node bench/memory.mjs [entries]`.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const dist = (p) => import(new URL(`../dist/${p}`, import.meta.url).href);

function ctxFor(home) {
  const sink = { write: () => true, isTTY: false, columns: 120 };
  return {
    cwd: home,
    env: { KOURAI_HOME: home, HOME: home },
    stdin: new PassThrough(),
    stdout: sink,
    stderr: sink,
    interactive: false,
    colorLevel: 0,
    now: () => new Date(),
    secureRandom: (n) => randomBytes(n),
    signal: new AbortController().signal,
  };
}

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

export async function run(report, opts = {}) {
  const entries = opts.entries ?? Number(process.env.KOURAI_BENCH_ENTRIES ?? 100_000);
  const home = mkdtempSync(join(tmpdir(), 'kourai-bench-memory-'));
  try {
    const [
      { default: synth },
      { default: index },
      { default: search },
      { default: buffer },
      { default: episodes },
      { default: supersede },
      { selectReplayBuffer },
    ] = await Promise.all([
      dist('commands/memoir/synth.js'),
      dist('commands/memoir/index-cmd.js'),
      dist('commands/memoir/search.js'),
      dist('commands/memoir/buffer.js'),
      dist('commands/memoir/episodes.js'),
      dist('commands/memoir/supersede.js'),
      dist('memoir/derive/replay-buffer.js'),
    ]);
    const ctx = ctxFor(home);
    const exec = (cmd, raw) => cmd.run(cmd.options.parse(raw), ctx);
    const dir = join(home, 'forge');
    mkdirSync(dir);
    const file = join(dir, 'memoir.jsonl');
    await exec(synth, { out: file, entries: String(entries), json: true });
    await exec(index, { memoir: [dir], json: true });

    for (const q of ['naming', 'hephaestus route', 'quarantine torn tail']) {
      const { ms, value } = await timed(() => exec(search, { query: q, memoir: [dir], json: true }));
      report(`search "${q}" (${entries} entries, ${value.total} matches)`, ms, 'ms');
    }
    const b = await timed(() => exec(buffer, { max: '5000', dryRun: true, memoir: [dir], json: true }));
    report(`buffer --max 5000 --dry-run (${entries} entries, ${b.value.load_bearing} load-bearing)`, b.ms, 'ms');

    const n = 200_000;
    const kinds = ['accepted', 'modified', 'rejected', 'deferred'];
    const cands = Array.from({ length: n }, (_, i) => ({
      entry_id: `E${i}`,
      source: 'specialist_proposed',
      entry_type: i % 9 === 0 ? 'interrupt' : 'pipeline_turn',
      player_response: { kind: kinds[i % 4] },
      interrupt: null,
      chain: 'none',
      has_preference: i % 5 === 0,
      affinity_delta: (i % 7) / 100,
      recorded_at: new Date(1.7e12 + i * 1000).toISOString(),
    }));
    const sel = await timed(() => selectReplayBuffer(cands, 5000));
    report(`selectReplayBuffer (${n} candidates, pure)`, sel.ms, 'ms');

    const e = await timed(() => exec(episodes, { by: 'session', memoir: [dir], json: true }));
    report(`episodes --by session (${entries} entries, ${e.value.episodes.length} episodes)`, e.ms, 'ms');

    // A chain of 50 corrections: the cost of resolving through it.
    const { value: first } = await timed(() =>
      exec(search, { query: 'naming', memoir: [dir], limit: '1', json: true }),
    );
    const id = first.hits[0]?.entry.entry_id;
    if (id) {
      const chain = await timed(async () => {
        for (let i = 0; i < 50; i++)
          await exec(supersede, {
            id,
            patch: JSON.stringify({ affinity_delta: i / 100 }),
            reason: `step ${i}`,
            memoir: [dir],
            fsync: false,
            json: true,
          });
      });
      report('supersede x50 on one chain (each resolves the whole chain)', chain.ms / 50, 'ms/op');
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await run(
    (name, value, unit, note) => console.log(`${name}: ${value.toFixed(1)} ${unit}${note ? ` (${note})` : ''}`),
    { entries: Number(process.argv[2] ?? 100_000) },
  );
}
