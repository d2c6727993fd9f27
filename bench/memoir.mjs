// Forge Memoir benchmarks (issue: memoir foundation). Every target is printed as a ratio against
// a baseline measured here, in this run: plain JSON.parse, the Python upstream reader and writer
// (pydantic), and `kourai --version`.
import { appendFileSync, closeSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT, cleanup, kourai, median, python, tempDir, timeIt } from './lib.mjs';

const dist = (p) => import(join(ROOT, 'dist', p));

/** Streams lines in 1 MiB chunks (the same reader shape kourai uses) and calls fn on each. */
function eachLine(path, fn) {
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  let carry = '';
  let n = 0;
  for (;;) {
    const got = readSync(fd, buf, 0, buf.length, null);
    if (got <= 0) break;
    const text = carry + buf.toString('utf8', 0, got);
    const parts = text.split('\n');
    carry = parts.pop();
    for (const l of parts) if (l) {
      fn(l);
      n++;
    }
  }
  closeSync(fd);
  return n;
}

const PY_MODEL = readFileSync(join(ROOT, 'test', 'fixtures', 'python', 'memoir_model.py'), 'utf8').split('\nfor raw in sys.stdin')[0];

export async function run(report, { quick }) {
  const { synthSessions } = await dist('memoir/synth.js');
  const { parseLine } = await dist('memoir/parse.js');
  const { isValidLine } = await dist('memoir/fast-validate.js');
  const { Memoir } = await dist('memoir/memoir.js');
  const { openIndex } = await dist('store/memoir-index.js');

  const dir = tempDir();
  try {
    // --- start-up
    const version = median([0, 1, 2, 3, 4, 5, 6].map(() => kourai(['--version'], { home: dir }).seconds));
    report('kourai --version (whole process)', version * 1000, 'ms');
    report('kourai memoir inspect --help (whole process)', median([0, 1, 2, 3, 4].map(() => kourai(['memoir', 'inspect', '--help'], { home: dir }).seconds)) * 1000, 'ms');

    // --- appends: 100k entries, batches of 10k, validated, fsynced per batch
    const inputs = [];
    for (const s of synthSessions({ seed: 11, sessions: 1e9, turns: 12 })) {
      for (const l of s.lines) {
        const v = JSON.parse(l);
        delete v.entry_id;
        delete v.recorded_at;
        inputs.push(v);
        if (inputs.length >= 100_000) break;
      }
      if (inputs.length >= 100_000) break;
    }
    const appendPath = join(dir, 'append', 'memoir.jsonl');
    const m = new Memoir(appendPath);
    const t0 = performance.now();
    for (let i = 0; i < inputs.length; i += 10_000) m.append(inputs.slice(i, i + 10_000));
    const appendRate = inputs.length / ((performance.now() - t0) / 1000);
    report('append 100k entries (validate + encode + write + fsync)', appendRate, 'entries/s');
    const pyIn = join(dir, 'py-input.ndjson');
    writeFileSync(pyIn, inputs.map((v) => JSON.stringify(v)).join('\n'));
    const pyWrite = python(
      `${PY_MODEL}
import time, os
rows = [json.loads(l) for l in open(${JSON.stringify(pyIn)}, encoding='utf-8')]
t = time.perf_counter()
with open(${JSON.stringify(join(dir, 'py-out.jsonl'))}, 'a', encoding='utf-8') as f:
    for r in rows:
        f.write(MemoirEntry.model_validate(r).model_dump_json() + '\\n')
    f.flush(); os.fsync(f.fileno())
print(len(rows) / (time.perf_counter() - t))`,
    );
    if (pyWrite.ok) {
      const py = Number(pyWrite.out.trim());
      report('  Python upstream writer (pydantic validate + dump + write)', py, 'entries/s');
      report('  append speed vs Python writer (target >= 3x)', appendRate / py, 'x');
    } else report('  Python upstream writer', 'skipped', '', 'python3 with pydantic not available');

    const sizes = quick ? [100_000] : [100_000, 1_000_000];
    const incremental = {};
    for (const n of sizes) {
      const tag = n >= 1e6 ? '1M' : `${n / 1000}k`;
      const file = join(dir, `m${tag}`, 'memoir.jsonl');
      kourai(['memoir', 'synth', '--out', file, '--entries', String(n), '--json'], { home: dir });
      const mb = statSync(file).size / 1048576;
      report(`[${tag}] memoir size`, mb, 'MiB', `${((mb * 1048576) / n).toFixed(0)} B/entry`);

      // --- validation throughput vs JSON.parse (same streaming reader, in-process)
      const jp = timeIt(() => eachLine(file, (l) => JSON.parse(l)), 3);
      const val = timeIt(() => eachLine(file, (l) => isValidLine(JSON.parse(l))), 3);
      const full = timeIt(() => eachLine(file, (l) => parseLine(l)), 3);
      report(`[${tag}] JSON.parse line throughput`, n / (jp.ms / 1000), 'entries/s');
      report(`[${tag}] validation (parse + schema) throughput`, n / (val.ms / 1000), 'entries/s', `${((jp.ms / val.ms) * 100).toFixed(0)}% of JSON.parse (target >= 50%)`);
      report(`[${tag}] read (parse + schema + derived ids for Python lines)`, n / (full.ms / 1000), 'entries/s', `${((jp.ms / full.ms) * 100).toFixed(0)}% of JSON.parse`);
      if (n === 100_000) {
        const pyRead = python(
          `${PY_MODEL}
import time
lines = open(${JSON.stringify(file)}, encoding='utf-8').read().split('\\n')
lines = [l for l in lines if l]
t = time.perf_counter()
for l in lines: MemoirEntry.model_validate_json(l)
print(len(lines) / (time.perf_counter() - t))`,
        );
        if (pyRead.ok) {
          const py = Number(pyRead.out.trim());
          report('  Python upstream reader (pydantic model_validate_json)', py, 'entries/s');
          report('  validation vs Python reader (target >= 3.5x)', n / (val.ms / 1000) / py, 'x');
        }
      }

      // --- index: full build, then 1k appended entries
      const home = join(dir, `home-${tag}`);
      const build = kourai(['memoir', 'index', '--memoir', file, '--json'], { home });
      report(`[${tag}] index build (whole process)`, build.seconds, 's', `${(n / build.seconds).toFixed(0)} entries/s, peak ${build.rssMB.toFixed(0)} MB`);
      // --- verify (index already built, as an operator's would be): throughput and peak memory
      const v = kourai(['memoir', 'verify', '--memoir', file, '--json'], { home });
      report(`[${tag}] verify (whole process)`, n / v.seconds, 'entries/s', `${v.seconds.toFixed(2)} s`);
      report(`[${tag}] verify peak memory`, v.rssMB, 'MB', n >= 1e6 ? 'target < 200 MB' : '');

      const extra = [];
      for (const s of synthSessions({ seed: 99, sessions: 1e9, turns: 12 })) {
        extra.push(...s.lines);
        if (extra.length >= 1000) break;
      }
      appendFileSync(file, `${extra.slice(0, 1000).join('\n')}\n`);
      const inc = kourai(['memoir', 'index', '--memoir', file, '--json'], { home });
      incremental[tag] = inc.seconds;
      report(`[${tag}] incremental index of 1k appended entries (whole process)`, inc.seconds * 1000, 'ms');

      // --- indexed queries
      const idx = openIndex(home);
      const files = [idx.file(file).id];
      const filter = { files, agents: ['aidos'], split: 'shared', latestOnly: true };
      const q = timeIt(() => {
        idx.count(filter, 1001); // as inspect counts
        return idx.query({ ...filter, limit: 20 });
      }, 7);
      const q2 = timeIt(() => idx.query({ files, scenePrefix: 'session-', sources: ['player_revision'], since: '2026-10-02T00:00:00Z', limit: 20, latestOnly: true }), 7);
      const q3 = timeIt(() => idx.query({ files, text: 'naming', limit: 20, latestOnly: true }), 7);
      idx.close();
      report(`[${tag}] indexed query: agent + split, capped count + 20 rows (as inspect)`, q.ms, 'ms', n >= 1e6 ? 'target < 100 ms' : '');
      report(`[${tag}] indexed query: source + scene + since, 20 rows`, q2.ms, 'ms');
      report(`[${tag}] indexed query: full text, 20 rows`, q3.ms, 'ms');
      const insp = median([0, 1, 2, 3, 4].map(() => kourai(['memoir', 'inspect', '--memoir', file, '--agent', 'aidos', '--split', 'shared', '--limit', '20', '--json'], { home }).seconds));
      report(`[${tag}] kourai memoir inspect --agent --split (whole process)`, insp * 1000, 'ms', `${(insp / version).toFixed(2)}x kourai --version (target <= 2x)`);
      cleanup(home);
    }
    // incremental cost must not grow with the memoir: compare with indexing a 1k-entry memoir from scratch
    const small = join(dir, 'm1k', 'memoir.jsonl');
    kourai(['memoir', 'synth', '--out', small, '--entries', '1000', '--json'], { home: dir });
    const fresh = kourai(['memoir', 'index', '--memoir', small, '--json'], { home: join(dir, 'home-1k') }).seconds;
    report('index a 1k-entry memoir from scratch (whole process)', fresh * 1000, 'ms');
    for (const [tag, s] of Object.entries(incremental)) report(`  incremental 1k at ${tag} / fresh 1k`, s / fresh, 'x', 'about 1 = independent of memoir size');
  } finally {
    cleanup(dir);
  }
  void BIN;
}
