import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { parseLine } from '../../../src/memoir/format/parse.js';
import { STANDARD_KEYS } from '../../../src/memoir/format/schema.js';
import { slopShard } from '../../../src/memoir/sample/planted/slop.js';
import { synthSessions } from '../../../src/memoir/sample/synth.js';
import { kouraiEntry, upstreamEntry } from '../arbitraries.js';

const model = fileURLToPath(new URL('../../fixtures/python/memoir_model.py', import.meta.url));
const probe = spawnSync('python3', ['-c', 'import pydantic; print(pydantic.VERSION)'], { encoding: 'utf8' });
const havePydantic = probe.status === 0;
// Without pydantic the byte-compatibility proof cannot run: say so loudly, here and in the run's
// closing summary (test/reporters/skips-and-proofs.ts), never skip in silence.
const missing = `the pydantic byte-compatibility proof did NOT run: python3 cannot import pydantic (${(probe.error?.message ?? probe.stderr.trim().split('\n').pop() ?? '').trim() || `exit ${probe.status}`})`;
if (!havePydantic) process.stderr.write(`WARNING: ${missing}\n`);

function pydantic(lines: string[]): { ok: boolean; dump?: string; values?: Record<string, unknown>; error?: string }[] {
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
