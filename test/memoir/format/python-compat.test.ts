import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { parseLine } from '../../../src/memoir/format/parse.js';
import { EXTENSION_KEYS, STANDARD_KEYS } from '../../../src/memoir/format/schema.js';
import { slopShard } from '../../../src/memoir/sample/planted/slop.js';
import { synthSessions } from '../../../src/memoir/sample/synth.js';
import { kouraiEntry, upstreamEntry } from '../arbitraries.js';
import show from '../../../src/commands/memoir/show.js';
import supersede from '../../../src/commands/memoir/supersede.js';
import { derivedId } from '../../../src/memoir/format/entry-id.js';
import { removeDir, testCtx } from '../../helpers/ctx.js';
import { runCmd } from '../../helpers/memory.js';

const model = fileURLToPath(new URL('../../fixtures/python/memoir_model.py', import.meta.url));
const probe = spawnSync('python3', ['-c', 'import pydantic; print(pydantic.VERSION)'], { encoding: 'utf8' });
const havePydantic = probe.status === 0;
// Without pydantic the byte-compatibility proof cannot run: say so loudly, here and in the run's
// closing summary (test/reporters/skips-and-proofs.ts), never skip in silence.
const missing = `the pydantic byte-compatibility proof did NOT run: python3 cannot import pydantic (${(probe.error?.message ?? probe.stderr.trim().split('\n').pop() ?? '').trim() || `exit ${probe.status}`})`;
if (!havePydantic) process.stderr.write(`WARNING: ${missing}\n`);

function pydantic(
  lines: string[],
): { ok: boolean; dump?: string; values?: Record<string, unknown>; extra?: [string, string][]; error?: string }[] {
  const r = spawnSync('python3', [model], { input: `${lines.join('\n')}\n`, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/** The ten standard keys of a kourai line, as the prefix pydantic would write. */
function standardPrefix(line: string): string {
  const p = parseLine(line); // keeps what JSON.parse alone would lose in a context (1.0, key order)
  if (!p.ok) throw new Error(p.message);
  const v = p.entry as Record<string, unknown>;
  const only = Object.fromEntries(STANDARD_KEYS.map((k) => [k, v[k]]));
  return encodeEntry(only as never);
}

describe('a Python host (pydantic) reads what kourai writes', () => {
  it('with the same values, and model_dump_json() equals our ten standard keys byte for byte (generated entries)', async (ctx) => {
    if (!havePydantic) ctx.skip(missing);
    // A split with both flags false is decided by pydantic's rule on reading (kourai never writes one).
    const decided = (e: { split: { shared_eligible: boolean; private_only: boolean } }) =>
      e.split.shared_eligible || e.split.private_only
        ? e
        : { ...e, split: { shared_eligible: false, private_only: true } };
    const entries = fc.sample(fc.oneof(upstreamEntry, kouraiEntry), { numRuns: 400, seed: 42 }).map(decided);
    const lines = entries.map((e) => encodeEntry(e as never));
    const results = pydantic(lines);
    results.forEach((r, i) => {
      const line = lines[i] as string;
      expect(r.error, line).toBeUndefined();
      expect(r.dump).toBe(standardPrefix(line));
      // same values: compare through pydantic's own dump (mode=json) with ours
      const ours = JSON.parse(line) as Record<string, unknown>;
      for (const k of STANDARD_KEYS) expect(r.values?.[k], `${k} of line ${i + 1}`).toEqual(ours[k]);
      expect(line.startsWith(standardPrefix(line).slice(0, -1))).toBe(true);
    });
    await ctx.annotate(
      `pydantic ${probe.stdout.trim()} byte-compatibility: ${lines.length} generated lines read back with the same values and byte-equal model_dump_json()`,
      'proof',
    );
  });

  it('on the whole sample forge', async (ctx) => {
    if (!havePydantic) ctx.skip(missing);
    const lines = [...synthSessions({ seed: 3, sessions: 3, turns: 10 })].flatMap((s) => s.lines);
    const results = pydantic(lines);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    results.forEach((r, i) => expect(r.dump).toBe(standardPrefix(lines[i] as string)));
    await ctx.annotate(
      `pydantic ${probe.stdout.trim()} byte-compatibility: the ${lines.length} lines of a synthetic forge`,
      'proof',
    );
  });

  it("on a simulated forge's slop reviews for Aidos", async (ctx) => {
    if (!havePydantic) ctx.skip(missing);
    const lines = [...synthSessions({ seed: 5, sessions: 3, turns: 2, slop: slopShard(5, 0, 6) })].flatMap(
      (s) => s.lines,
    );
    expect(lines.filter((l) => l.includes('Slop check:')).length).toBe(18);
    const results = pydantic(lines);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    results.forEach((r, i) => expect(r.dump).toBe(standardPrefix(lines[i] as string)));
    await ctx.annotate(
      `pydantic ${probe.stdout.trim()} byte-compatibility: ${lines.length} lines with slop reviews`,
      'proof',
    );
  });
});

/** A Python host's line: pydantic's ten keys, then keys of the host's own that no model declares. */
const host = (proposed: string) =>
  `{"scene_id":"session-0000abcd.turn-1","agent":"techne","source":"specialist_proposed","context":{"task_type":"qa","score":1.0},"narrative_beat":null,"agent_proposed":${JSON.stringify(proposed)},"player_response":{"kind":"modified","delta":"déjà vu","felt":null},"affinity_delta":1.0,"training_label":{"preference_pair":null,"weight":1.0},"split":{"shared_eligible":true,"private_only":false},"host":"py-host-1","host_score":1.0,"trace":{"a":1.0,"b":[2.50,1e-7]}}`;

describe('a Python line holding keys no model declares, shown', () => {
  it('memoir show gives a line pydantic reads exactly as the stored one: the same dump, the same other keys and values', async (ctx) => {
    if (!havePydantic) ctx.skip(missing);
    const c = testCtx();
    try {
      const original = host('return x');
      const path = join(c.home, 'memoir.jsonl');
      writeFileSync(path, `${original}\n`);
      const r = await runCmd(show, { id: derivedId(original), memoir: [path] }, c);
      const [stored, shown] = pydantic([original, r.line]);
      expect(shown?.ok, shown?.error).toBe(true);
      expect(shown?.dump).toBe(stored?.dump);
      expect(shown?.extra).toEqual(stored?.extra);
      expect(stored?.extra).toEqual([
        ['host', '"py-host-1"'],
        ['host_score', '1.0'],
        ['trace', '{"a":1.0,"b":[2.5,1e-7]}'],
      ]);
    } finally {
      removeDir(c.home);
    }
  });

  it("re-encoded, it carries pydantic's dump and no key of the host (model_dump_json() leaves them out)", (ctx) => {
    if (!havePydantic) ctx.skip(missing);
    const original = host('return x');
    const p = parseLine(original);
    if (!p.ok) throw new Error(p.message);
    const [stored, encoded] = pydantic([original, encodeEntry(p.entry)]);
    expect(encoded?.dump).toBe(stored?.dump);
    for (const [k] of encoded?.extra ?? []) expect(EXTENSION_KEYS).toContain(k);
  });
});

describe('a correction of a Python line holding keys no model declares', () => {
  it('is written as pydantic writes the corrected line (the keys left out), then only kourai keys', async (ctx) => {
    if (!havePydantic) ctx.skip(missing);
    const c = testCtx();
    try {
      const original = host('return x');
      const path = join(c.home, 'memoir.jsonl');
      writeFileSync(path, `${original}\n`);
      const r = await runCmd(
        supersede,
        { id: derivedId(original), patch: '{"agent_proposed":"return y"}', reason: 'typo', memoir: [path] },
        c,
      );
      const written = readFileSync(path, 'utf8').split('\n');
      expect(written[0]).toBe(original);
      const revision = written[1] as string;
      const [want, got] = pydantic([host('return y'), revision]);
      expect(got?.ok, got?.error).toBe(true);
      expect(got?.dump).toBe(want?.dump);
      expect(revision.startsWith(`${(want?.dump ?? '').slice(0, -1)},`)).toBe(true);
      expect(got?.extra?.map(([k]) => k)).toEqual([
        'entry_id',
        'recorded_at',
        'entry_type',
        'supersedes',
        'revision_reason',
      ]);
      expect(r.ignored).toHaveLength(3);
    } finally {
      removeDir(c.home);
    }
  });
});
