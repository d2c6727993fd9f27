import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecords } from '../../src/memoir/file/reader.js';
import { assertBuilt, BIN, cleanEnv, kourai } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';

/**
 * The real binary under a real crash (SIGKILL in the middle of a 60k-entry batch) and under
 * lock-free Python hosts appending whole lines while kourai appends.
 */
let home: string;
beforeAll(() => {
  assertBuilt();
  home = mkdtempSync(join(tmpdir(), 'kourai-crash-'));
});
afterAll(() => removeDir(home));

const entry = (tag: string, i: number) => ({
  scene_id: `session-${tag}.turn-${i}`,
  agent: 'kallos',
  source: 'specialist_proposed',
  narrative_beat: tag,
  agent_proposed: `proposal ${i} ${'x'.repeat(i % 300)}`,
});
const size = (p: string) => {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a batch killed with SIGKILL in the middle is all or nothing once the next writer ran', () => {
  const batch = Array.from({ length: 60_000 }, (_, i) => JSON.stringify(entry('0000dead', i))).join('\n');
  // Kill when the batch is journalled (before or while it is written), or once the memoir grows (while or after).
  for (const [n, trigger] of [
    [1, 'journal'],
    [2, 'memoir'],
    [3, 'memoir'],
  ] as const) {
    it(`run ${n}: killed once the ${trigger} shows the batch`, async () => {
      const dir = join(home, `run${n}`);
      mkdirSync(dir);
      const memoir = join(dir, 'memoir.jsonl');
      expect(kourai(['memoir', 'append', '--memoir', memoir, JSON.stringify(entry('00000001', 0))], home).code).toBe(0);
      const input = join(dir, 'batch.ndjson');
      writeFileSync(input, batch);
      const before = size(memoir);
      const child = spawn(process.execPath, [BIN, 'memoir', 'append', '--memoir', memoir, '--file', input, '--json'], {
        env: cleanEnv(home),
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      let done = false;
      void exited.then(() => (done = true));
      while (!done && (trigger === 'journal' ? size(`${memoir}.journal`) === 0 : size(memoir) === before))
        await sleep(1);
      child.kill('SIGKILL');
      const code = await exited;
      expect(kourai(['memoir', 'append', '--memoir', memoir, JSON.stringify(entry('00000002', 1))], home).code).toBe(0);
      const recs = [...readRecords(memoir)];
      expect(recs.filter((r) => r.kind !== 'entry').map((r) => r.kind)).toEqual([]);
      const fromBatch = recs.filter((r) => r.kind === 'entry' && r.entry.narrative_beat === '0000dead').length;
      // exit 0 means the batch was acknowledged: then all of it must be there.
      expect(code === 0 ? [60_000] : [0, 60_000]).toContain(fromBatch);
      expect(recs[0]?.kind === 'entry' && recs[0].entry.scene_id).toBe('session-00000001.turn-0');
      expect(
        recs.at(-1)?.kind === 'entry' && recs.at(-1)?.kind === 'entry'
          ? (recs.at(-1) as { entry: { scene_id: string } }).entry.scene_id
          : '',
      ).toBe('session-00000002.turn-1');
    });
  }
});

describe('lock-free Python hosts appending whole lines while kourai appends', () => {
  it('nothing is lost or interleaved', async () => {
    const dir = join(home, 'race');
    mkdirSync(dir);
    const memoir = join(dir, 'memoir.jsonl');
    expect(kourai(['memoir', 'append', '--memoir', memoir, JSON.stringify(entry('00000000', 0))], home).code).toBe(0);
    const host = `
import json, os, sys
path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
for i in range(n):
    line = json.dumps({"scene_id": f"session-{who}.turn-{i}", "agent": "metis", "source": "specialist_proposed",
                       "context": None, "narrative_beat": who, "agent_proposed": "p" * (50 + (i * 37) % 2000),
                       "player_response": None, "affinity_delta": 0.0, "training_label": None,
                       "split": {"shared_eligible": True, "private_only": False}}, separators=(",", ":")) + "\\n"
    os.write(fd, line.encode())  # one O_APPEND write per line, no lock
os.close(fd)
`;
    const runProc = (cmd: string, args: string[], input?: string) =>
      new Promise<number>((resolve) => {
        const p = spawn(cmd, args, {
          env: cleanEnv(home),
          stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'inherit'],
        });
        if (input !== undefined) p.stdin?.end(input);
        p.on('exit', (code) => resolve(code ?? -1));
      });
    const kouraiWriter = async (tag: string) => {
      const codes: number[] = [];
      for (let b = 0; b < 5; b++) {
        const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify(entry(tag, b * 200 + i))).join('\n');
        codes.push(await runProc(process.execPath, [BIN, 'memoir', 'append', '--memoir', memoir, '--json'], lines));
      }
      return codes;
    };
    const results = await Promise.all([
      runProc('python3', ['-c', host, memoir, 'py000001', '1500']),
      runProc('python3', ['-c', host, memoir, 'py000002', '1500']),
      kouraiWriter('k0000001'),
      kouraiWriter('k0000002'),
    ]);
    expect(results.flat()).toEqual([0, 0, ...Array(10).fill(0)]);
    const recs = [...readRecords(memoir)];
    expect(recs.filter((r) => r.kind !== 'entry')).toEqual([]);
    const by = new Map<string, number>();
    for (const r of recs)
      if (r.kind === 'entry' && r.entry.narrative_beat)
        by.set(r.entry.narrative_beat, (by.get(r.entry.narrative_beat) ?? 0) + 1);
    expect(Object.fromEntries(by)).toEqual({
      '00000000': 1,
      py000001: 1500,
      py000002: 1500,
      k0000001: 1000,
      k0000002: 1000,
    });
    expect(readFileSync(memoir, 'utf8').endsWith('\n')).toBe(true);
  });
});
