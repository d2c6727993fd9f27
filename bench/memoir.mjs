// Forge Memoir benchmarks (issues 2 and 13). Every target is printed as a ratio against a baseline
// measured here, in this run: plain JSON.parse, the upstream Python reader and writer, and
// `kourai --version`. The Python baseline that counts is ../shared/reference/python/memoir_ref.py
// (the upstream schema with its Python validators, as hosts run it); the validator-free fixture
// model (test/fixtures/python/memoir_model.py) is printed second, labelled as such.
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, ROOT, cleanup, cpuTimed, kourai, median, python, tempDir, timeIt } from './lib.mjs';

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
    for (const l of parts)
      if (l) {
        fn(l);
        n++;
      }
  }
  closeSync(fd);
  return n;
}

/** A fresh node that imports the library and times one verifyMemoirs of the file (start-up excluded). */
const kouraiInProcess = (file) => `
const { verifyMemoirs } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'memoir', 'verify', 'verify.js')).href)});
const t = performance.now(); const c = process.cpuUsage();
const v = await verifyMemoirs([${JSON.stringify(file)}]);
const s = (performance.now() - t) / 1000; const u = process.cpuUsage(c);
const n = v.files.reduce((a, f) => a + f.entries, 0);
console.log(n / s, n / ((u.user + u.system) / 1e6));`;

export const PY_MODEL = readFileSync(join(ROOT, 'test', 'fixtures', 'python', 'memoir_model.py'), 'utf8').split(
  '\nfor raw in sys.stdin',
)[0];
// shared/ sits beside the checkout (../shared), or beside the worktrees' parent (../../shared).
const PY_REF_DIR =
  [join(ROOT, '..', 'shared', 'reference', 'python'), join(ROOT, '..', '..', 'shared', 'reference', 'python')].find(
    (d) => existsSync(join(d, 'memoir_ref.py')),
  ) ?? join(ROOT, '..', 'shared', 'reference', 'python');
export const PY_REF = `import sys, json\nsys.path.insert(0, ${JSON.stringify(PY_REF_DIR)})\nfrom memoir_ref import MemoirEntry`;
export const hasRef = existsSync(join(PY_REF_DIR, 'memoir_ref.py'));

/** Python writer and reader loops, the same code for both models. */
export const pyWriter = (model, input, out) => `${model}
import time, os, json
rows = [json.loads(l) for l in open(${JSON.stringify(input)}, encoding='utf-8')]
t = time.perf_counter(); c = time.process_time()
with open(${JSON.stringify(out)}, 'a', encoding='utf-8') as f:
    for r in rows:
        f.write(MemoirEntry.model_validate(r).model_dump_json() + '\\n')
    f.flush(); os.fsync(f.fileno())
print(len(rows) / (time.perf_counter() - t), len(rows) / (time.process_time() - c))`;
export const pyReader = (model, file) => `${model}
import time
t = time.perf_counter(); c = time.process_time()
n = 0
with open(${JSON.stringify(file)}, encoding='utf-8') as f:
    for line in f:
        s = line.rstrip('\\n')
        if s.strip():
            MemoirEntry.model_validate_json(s)
            n += 1
print(n / (time.perf_counter() - t), n / (time.process_time() - c))`;

export async function run(report, { quick }) {
  const { synthSessions } = await dist('memoir/sample/synth.js');
  const { parseLine } = await dist('memoir/format/parse.js');
  const { isValidLine } = await dist('memoir/format/fast-validate.js');
  const { Memoir } = await dist('memoir/file/memoir.js');
  const { openIndex } = await dist('memoir-index/memoir-index.js');
  const { defaultThreads } = await dist('memoir/verify/verify-threads.js');
  const cores = availableParallelism();

  const dir = tempDir();
  try {
    // --- start-up
    const versions = [0, 1, 2, 3, 4, 5, 6].map(() => kourai(['--version'], { home: dir }));
    const version = median(versions.map((r) => r.seconds));
    const versionCpu = median(versions.map((r) => r.cpuSeconds));
    report('kourai --version (whole process)', version * 1000, 'ms', `CPU time ${(versionCpu * 1000).toFixed(0)} ms`);
    report(
      'kourai memoir inspect --help (whole process)',
      median([0, 1, 2, 3, 4].map(() => kourai(['memoir', 'inspect', '--help'], { home: dir }).seconds)) * 1000,
      'ms',
    );

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
    // kourai and the Python writers alternate, three rounds, medians: a loaded machine slows
    // whichever runs at a bad moment; CPU time (user + system) is the load-independent second ratio.
    const pyIn = join(dir, 'py-input.ndjson');
    writeFileSync(pyIn, inputs.map((v) => JSON.stringify(v)).join('\n'));
    const rounds = { kourai: [], ref: [], model: [] };
    let refError;
    for (let round = 0; round < 3; round++) {
      const m = new Memoir(join(dir, `append-${round}`, 'memoir.jsonl'));
      const k = cpuTimed(() => {
        for (let i = 0; i < inputs.length; i += 10_000) m.append(inputs.slice(i, i + 10_000));
      });
      rounds.kourai.push([inputs.length / k.seconds, inputs.length / k.cpuSeconds]);
      const ref = hasRef
        ? python(pyWriter(PY_REF, pyIn, join(dir, `py-ref-out-${round}.jsonl`)))
        : { ok: false, error: 'memoir_ref.py not found' };
      if (ref.ok) rounds.ref.push(ref.out.trim().split(/\s+/).map(Number));
      else refError = ref.error;
      const model = python(pyWriter(PY_MODEL, pyIn, join(dir, `py-out-${round}.jsonl`)));
      if (model.ok) rounds.model.push(model.out.trim().split(/\s+/).map(Number));
    }
    const med = (xs, i) => median(xs.map((x) => x[i]));
    const appendRate = med(rounds.kourai, 0);
    report(
      'append 100k entries in batches of 10k (validate, encode, journal, write, fsync)',
      appendRate,
      'entries/s',
      `median of 3; CPU-time rate ${med(rounds.kourai, 1).toFixed(0)}/s`,
    );
    if (rounds.ref.length) {
      report(
        '  upstream Python writer (memoir_ref.py: validators, dump, write, fsync)',
        med(rounds.ref, 0),
        'entries/s',
        `CPU-time rate ${med(rounds.ref, 1).toFixed(0)}/s`,
      );
      report(
        '  append vs upstream writer (target >= 3x)',
        appendRate / med(rounds.ref, 0),
        'x',
        `by CPU time ${(med(rounds.kourai, 1) / med(rounds.ref, 1)).toFixed(2)}x`,
      );
    } else report('  upstream Python writer', 'skipped', '', String(refError).split('\n')[0]);
    // A floor for any JS writer: serialising the same entries with JSON.stringify, nothing else.
    const stringify = timeIt(() => inputs.map((v) => JSON.stringify(v)), 3);
    if (rounds.ref.length)
      report(
        '  JSON.stringify alone vs upstream writer (a floor for any JSON writer in JS)',
        inputs.length / (stringify.ms / 1000) / med(rounds.ref, 0),
        'x',
      );
    // The I/O of the same batches, nothing else: the bytes kourai wrote, 10 writes + 10 fsyncs.
    // With JSON.stringify's time it bounds any writer that validates nothing and encodes at V8's speed.
    const written = readFileSync(join(dir, 'append-0', 'memoir.jsonl'));
    const io = timeIt(() => {
      const fd = openSync(join(dir, `io-floor-${Math.random().toString(36).slice(2)}.jsonl`), 'a');
      const step = Math.ceil(written.length / 10);
      for (let at = 0; at < written.length; at += step) {
        writeSync(fd, written.subarray(at, Math.min(at + step, written.length)));
        fsyncSync(fd);
      }
      closeSync(fd);
    }, 3);
    if (rounds.ref.length) {
      report(
        '  write + fsync alone (the same bytes, 10 batches) vs upstream writer',
        inputs.length / (io.ms / 1000) / med(rounds.ref, 0),
        'x',
        `${io.ms.toFixed(0)} ms`,
      );
      report(
        '  write + fsync + JSON.stringify vs upstream writer (the floor for a JS writer)',
        inputs.length / ((io.ms + stringify.ms) / 1000) / med(rounds.ref, 0),
        'x',
        'no validation, no journal',
      );
    }
    if (rounds.model.length) {
      report('  second figure: validator-free fixture model writer', med(rounds.model, 0), 'entries/s');
      report(
        '  append vs validator-free model writer',
        appendRate / med(rounds.model, 0),
        'x',
        `by CPU time ${(med(rounds.kourai, 1) / med(rounds.model, 1)).toFixed(2)}x`,
      );
    }

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
      report(
        `[${tag}] validation (parse + schema) throughput`,
        n / (val.ms / 1000),
        'entries/s',
        `${((jp.ms / val.ms) * 100).toFixed(0)}% of JSON.parse (target >= 50%)`,
      );
      report(
        `[${tag}] read (parse + schema + derived ids for Python lines)`,
        n / (full.ms / 1000),
        'entries/s',
        `${((jp.ms / full.ms) * 100).toFixed(0)}% of JSON.parse`,
      );
      if (n === 100_000) {
        // --- verify of a memoir that was never indexed vs the upstream reader, alternating rounds.
        // Three comparisons, all printed: (1) the target's own terms, kourai as a whole process vs the
        // Python loop in-process (its start-up and imports excluded); (2) in-process vs in-process:
        // kourai's library function (verifyMemoirs) timed inside a fresh node, start-up excluded,
        // as the Python loop is; (3) whole process vs whole process: python3 running the same loop,
        // interpreter start-up and the pydantic import included, timed from outside.
        const vr = { kourai: [], one: [], inproc: [], ref: [], refWhole: [], model: [] };
        let peak = 0;
        for (let round = 0; round < 3; round++) {
          const freshHome = join(dir, `home-verify-${tag}-${round}`);
          const vf = kourai(['memoir', 'verify', '--memoir', file, '--json'], { home: freshHome });
          cleanup(freshHome);
          vr.kourai.push([n / vf.seconds, n / vf.cpuSeconds]);
          peak = Math.max(peak, vf.rssMB);
          // the same with one thread per core, forced (the default takes one per idle core)
          const one = kourai(['memoir', 'verify', '--memoir', file, '--json'], {
            home: `${freshHome}-1`,
            env: { KOURAI_VERIFY_THREADS: String(cores) },
          });
          cleanup(`${freshHome}-1`);
          vr.one.push([n / one.seconds, n / one.cpuSeconds]);
          const ip = spawnSync(process.execPath, ['--input-type=module', '-e', kouraiInProcess(file)], {
            encoding: 'utf8',
          });
          if (ip.status === 0) vr.inproc.push(ip.stdout.trim().split(/\s+/).map(Number));
          const t0 = performance.now();
          const ref = hasRef ? python(pyReader(PY_REF, file)) : undefined;
          const whole = (performance.now() - t0) / 1000;
          if (ref?.ok) {
            vr.ref.push(ref.out.trim().split(/\s+/).map(Number));
            vr.refWhole.push(n / whole);
          }
          const model = python(pyReader(PY_MODEL, file));
          if (model.ok) vr.model.push(model.out.trim().split(/\s+/).map(Number));
        }
        const med = (xs, i) => median(xs.map((x) => x[i]));
        const verifyRate = med(vr.kourai, 0);
        report(
          `[${tag}] verify, never indexed (whole process)`,
          verifyRate,
          'entries/s',
          `median of 3, ${(n / verifyRate).toFixed(2)} s, peak ${peak.toFixed(0)} MB; CPU-time rate ${med(vr.kourai, 1).toFixed(0)}/s`,
        );
        report(
          `[${tag}] verify, never indexed, ${cores} threads forced (KOURAI_VERIFY_THREADS=${cores}, whole process)`,
          med(vr.one, 0),
          'entries/s',
          `median of 3, ${(n / med(vr.one, 0)).toFixed(2)} s; CPU-time rate ${med(vr.one, 1).toFixed(0)}/s; the other verify figures use the default, one thread per idle core by the load average: ${defaultThreads()} at the end of these rounds (load ${loadavg()[0].toFixed(1)})`,
        );
        if (vr.inproc.length)
          report(
            `[${tag}] verify, never indexed (in-process: verifyMemoirs in a fresh node, start-up excluded)`,
            med(vr.inproc, 0),
            'entries/s',
            `median of 3; CPU-time rate ${med(vr.inproc, 1).toFixed(0)}/s`,
          );
        if (vr.ref.length) {
          const py = med(vr.ref, 0);
          const pyWhole = median(vr.refWhole);
          report(
            '  upstream Python reader (memoir_ref.py: model_validate_json, validators; in-process)',
            py,
            'entries/s',
            `CPU-time rate ${med(vr.ref, 1).toFixed(0)}/s`,
          );
          report(
            '  upstream Python reader, whole process (python3 start-up + pydantic import + loop)',
            pyWhole,
            'entries/s',
            `${(n / pyWhole).toFixed(2)} s`,
          );
          report(
            '  (1) verify whole process vs upstream reader in-process (target >= 3.5x)',
            verifyRate / py,
            'x',
            `by CPU time ${(med(vr.kourai, 1) / med(vr.ref, 1)).toFixed(2)}x`,
          );
          if (vr.inproc.length)
            report(
              '  (2) verify in-process vs upstream reader in-process (target >= 3.5x)',
              med(vr.inproc, 0) / py,
              'x',
              `by CPU time ${(med(vr.inproc, 1) / med(vr.ref, 1)).toFixed(2)}x`,
            );
          report(
            '  (3) verify whole process vs upstream reader whole process (target >= 3.5x)',
            verifyRate / pyWhole,
            'x',
          );
          report(
            '  JSON.parse alone vs upstream reader (a floor for any JSON.parse-based reader)',
            n / (jp.ms / 1000) / py,
            'x',
          );
          report('  validation alone vs upstream reader', n / (val.ms / 1000) / py, 'x');
        } else report('  upstream Python reader', 'skipped', '', hasRef ? 'python failed' : 'memoir_ref.py not found');
        if (vr.model.length) {
          const py = med(vr.model, 0);
          report('  second figure: validator-free fixture model reader', py, 'entries/s');
          report('  verify (never indexed) vs validator-free model reader', verifyRate / py, 'x');
        }
      } else {
        const freshHome = join(dir, `home-verify-${tag}`);
        const vf = kourai(['memoir', 'verify', '--memoir', file, '--json'], { home: freshHome });
        report(
          `[${tag}] verify, never indexed (whole process)`,
          n / vf.seconds,
          'entries/s',
          `${vf.seconds.toFixed(2)} s; CPU-time rate ${(n / vf.cpuSeconds).toFixed(0)}/s`,
        );
        report(`[${tag}] verify, never indexed: peak memory`, vf.rssMB, 'MB', 'target < 200 MB');
        cleanup(freshHome);
      }

      // --- index: full build, then 1k appended entries
      const home = join(dir, `home-${tag}`);
      const build = kourai(['memoir', 'index', '--memoir', file, '--json'], { home });
      report(
        `[${tag}] index build from scratch (whole process)`,
        n / build.seconds,
        'entries/s',
        `target >= 100k/s; ${build.seconds.toFixed(2)} s, peak ${build.rssMB.toFixed(0)} MB; CPU-time rate ${(n / build.cpuSeconds).toFixed(0)}/s`,
      );
      // A bulk load leaves the full-text index to the first text query: what that first search costs, and the next.
      const search = () => kourai(['memoir', 'search', 'naming', '--memoir', file, '--json'], { home });
      const firstSearch = search();
      report(
        `[${tag}] first full-text query after a fresh build (memoir search, whole process: builds the FTS)`,
        firstSearch.seconds,
        's',
        `CPU ${firstSearch.cpuSeconds.toFixed(2)} s, peak ${firstSearch.rssMB.toFixed(0)} MB; build + first search ${(n / (build.seconds + firstSearch.seconds)).toFixed(0)} entries/s`,
      );
      const nextSearch = median([0, 1, 2].map(() => search().seconds));
      report(`[${tag}] next full-text queries (memoir search, whole process)`, nextSearch * 1000, 'ms', 'median of 3');
      // --- verify (index already built, as an operator's would be): throughput and peak memory
      const v = kourai(['memoir', 'verify', '--memoir', file, '--json'], { home });
      report(
        `[${tag}] verify, indexed: every indexed byte re-hashed (whole process)`,
        n / v.seconds,
        'entries/s',
        `${v.seconds.toFixed(2)} s`,
      );
      report(`[${tag}] verify, indexed: peak memory`, v.rssMB, 'MB', n >= 1e6 ? 'target < 200 MB' : '');

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
      const q2 = timeIt(
        () =>
          idx.query({
            files,
            scenePrefix: 'session-',
            sources: ['player_revision'],
            since: '2026-10-02T00:00:00Z',
            limit: 20,
            latestOnly: true,
          }),
        7,
      );
      const q3 = timeIt(() => idx.query({ files, text: 'naming', limit: 20, latestOnly: true }), 7);
      idx.close();
      report(
        `[${tag}] indexed query: agent + split, capped count + 20 rows (as inspect)`,
        q.ms,
        'ms',
        n >= 1e6 ? 'target < 100 ms' : '',
      );
      report(`[${tag}] indexed query: source + scene + since, 20 rows`, q2.ms, 'ms');
      report(`[${tag}] indexed query: full text, 20 rows`, q3.ms, 'ms');
      // interleaved with --version, so both see the same load (the start-of-run --version is minutes earlier)
      const insps = [];
      const vers = [];
      for (let i = 0; i < 7; i++) {
        vers.push(kourai(['--version'], { home }));
        insps.push(
          kourai(
            ['memoir', 'inspect', '--memoir', file, '--agent', 'aidos', '--split', 'shared', '--limit', '20', '--json'],
            { home },
          ),
        );
      }
      const [insp, ver] = [median(insps.map((r) => r.seconds)), median(vers.map((r) => r.seconds))];
      const [inspCpu, verCpu] = [median(insps.map((r) => r.cpuSeconds)), median(vers.map((r) => r.cpuSeconds))];
      report(
        `[${tag}] kourai memoir inspect --agent --split (whole process)`,
        insp * 1000,
        'ms',
        `${(insp / ver).toFixed(2)}x kourai --version (target <= 2x; interleaved medians of 7); by CPU time ${(inspCpu / verCpu).toFixed(2)}x`,
      );
      cleanup(home);
    }
    // incremental cost must not grow with the memoir: compare with indexing a 1k-entry memoir from scratch
    const small = join(dir, 'm1k', 'memoir.jsonl');
    kourai(['memoir', 'synth', '--out', small, '--entries', '1000', '--json'], { home: dir });
    const fresh = kourai(['memoir', 'index', '--memoir', small, '--json'], { home: join(dir, 'home-1k') }).seconds;
    report('index a 1k-entry memoir from scratch (whole process)', fresh * 1000, 'ms');
    for (const [tag, s] of Object.entries(incremental))
      report(`  incremental 1k at ${tag} / fresh 1k`, s / fresh, 'x', 'about 1 = independent of memoir size');
  } finally {
    cleanup(dir);
  }
  void BIN;
}
