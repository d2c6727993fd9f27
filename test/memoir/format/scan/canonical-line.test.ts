import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { derivedId } from '../../../../src/memoir/format/entry-id.js';
import { encodeEntry, isKouraiContext } from '../../../../src/memoir/format/encode.js';
import { parseLine } from '../../../../src/memoir/format/parse.js';
import { plainWord, ScannedLine, scanLine } from '../../../../src/memoir/format/scan/canonical-line.js';
import { RECORDED_AT_RE } from '../../../../src/memoir/format/scan/recorded-at.js';
import type { MemoirEntry, MemoirLine } from '../../../../src/memoir/format/schema.js';
import { entryTypeOf, entryVerdict } from '../../../../src/memoir/format/split-rule.js';
import { kouraiEntry, upstreamEntry } from '../../arbitraries.js';
import { mutate, mutation, pythonLines, writtenLine } from './lines.js';

/** A canonical line of a Metis proposal `x`, to be edited into the case under test. */
const METIS_X = encodeEntry({
  scene_id: 's',
  agent: 'metis',
  source: 'specialist_proposed',
  context: null,
  narrative_beat: null,
  agent_proposed: 'x',
  player_response: null,
  affinity_delta: 0,
  training_label: null,
  split: { shared_eligible: true, private_only: false },
});

/**
 * The byte scanner is only a shortcut: whatever it accepts, the slow path (JSON.parse + schema +
 * lone-surrogate rule, parseLine) must accept too, and read the same values. The oracle here is
 * parseLine and the split rule applied to its entry, never the scanner's own helpers.
 */

/** What a reader of the entry sees, from the slow path. */
function slowView(text: string): Record<string, unknown> | undefined {
  const r = parseLine(text, () => 1);
  if (!r.ok) return undefined;
  const e = r.entry as MemoirEntry & Record<string, unknown>;
  const v = entryVerdict(e);
  return {
    entry_id: e.entry_id,
    derived: r.derived,
    scene_id: e.scene_id,
    agent: e.agent,
    source: e.source,
    entry_type: e.entry_type ?? null,
    type: entryTypeOf(e),
    interrupt: e.interrupt ? { ...e.interrupt } : null,
    shared_eligible: e.split.shared_eligible,
    private_only: e.split.private_only,
    affinity_delta: e.affinity_delta,
    kind: e.player_response?.kind ?? null,
    felt: e.player_response?.felt ?? null,
    delta: e.player_response?.delta ?? null,
    task_type: e.context?.task_type ?? null,
    transcript_hash: e.context?.transcript_hash ?? null,
    narrative_beat: e.narrative_beat,
    agent_proposed: e.agent_proposed,
    has_preference: e.training_label?.preference_pair != null,
    pair_text_0: e.training_label?.preference_pair?.[0]?.text ?? null,
    pair_text_1: e.training_label?.preference_pair?.[1]?.text ?? null,
    weight: e.training_label ? e.training_label.weight : null,
    recorded_at: typeof e.recorded_at === 'string' ? e.recorded_at : null,
    supersedes: typeof e.supersedes === 'string' ? e.supersedes : null,
    revision_reason: typeof e.revision_reason === 'string' ? e.revision_reason : null,
    comment: typeof e.comment === 'string' ? e.comment : null,
    likert: typeof e.likert === 'number' ? e.likert : null,
    target_turn: e.interrupt ? e.interrupt.target_turn : null,
    has_episode: e.episode !== undefined,
    has_council: e.council !== undefined,
    verdict: { ...v },
  };
}

function fastView(bytes: Buffer, out: ScannedLine): Record<string, unknown> | undefined {
  if (!scanLine(bytes, 0, bytes.length, out)) return undefined;
  const derived = !out.has('entry_id');
  return {
    entry_id: derived ? derivedId(bytes) : out.string('entry_id'),
    derived,
    scene_id: out.string('scene_id'),
    agent: out.agent,
    source: out.source,
    entry_type: out.entryType,
    type: out.type(),
    interrupt: out.interrupt ? { ...out.interrupt, target_turn: out.string('target_turn') } : null,
    shared_eligible: out.sharedEligible,
    private_only: out.privateOnly,
    affinity_delta: out.affinityDelta,
    kind: out.responseKind,
    felt: out.felt,
    delta: out.string('delta'),
    task_type: out.string('task_type'),
    transcript_hash: out.string('transcript_hash'),
    narrative_beat: out.string('narrative_beat'),
    agent_proposed: out.string('agent_proposed'),
    has_preference: out.hasPreference,
    pair_text_0: out.string('pair_text_0'),
    pair_text_1: out.string('pair_text_1'),
    weight: out.weight,
    recorded_at: out.string('recorded_at'),
    supersedes: out.string('supersedes'),
    revision_reason: out.string('revision_reason'),
    comment: out.string('comment'),
    likert: out.likert,
    target_turn: out.string('target_turn'),
    has_episode: out.hasEpisode,
    has_council: out.hasCouncil,
    verdict: { ...out.verdict() },
  };
}

/**
 * The property: never accept what the slow path rejects; when accepting, read exactly what it reads
 * (numbers compared with Object.is, so -0 and 0 differ). Returns whether the scanner accepted.
 */
function agrees(bytes: Buffer, out = new ScannedLine()): boolean {
  if (!isUtf8(bytes)) return false; // the reader reports invalid UTF-8 before anything is scanned
  const fast = fastView(bytes, out);
  if (fast === undefined) return false;
  const slow = slowView(bytes.toString('utf8'));
  expect(slow, `scanner accepted a line the slow path rejects: ${bytes.toString('utf8').slice(0, 300)}`).toBeDefined();
  expect(fast).toEqual(slow);
  expect(Object.is(fast.affinity_delta, slow?.affinity_delta)).toBe(true);
  expect(Object.is(fast.weight, slow?.weight)).toBe(true);
  return true;
}

describe('canonical line scanner', () => {
  it('recorded_at: the same pattern as zod', () => {
    const schema = z.iso.datetime({ offset: true }) as unknown as { _zod: { def: { pattern: RegExp } } };
    expect(RECORDED_AT_RE.source).toBe(schema._zod.def.pattern.source);
    expect(RECORDED_AT_RE.flags).toBe(schema._zod.def.pattern.flags);
  });

  it('plainWord: true exactly when no byte of the word is a quote, a backslash or a control character', () => {
    const special = (c: number): boolean => c < 0x20 || c === 0x22 || c === 0x5c;
    const edge = [0, 1, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff];
    let wrong = 0;
    for (let pos = 0; pos < 4; pos++) {
      for (let v = 0; v < 256; v++) {
        for (const a of edge) {
          for (const c of edge) {
            const bytes = [a, c, a];
            bytes.splice(pos, 0, v);
            const x = new DataView(new Uint8Array(bytes).buffer).getInt32(0, true);
            if (plainWord(x) === bytes.some(special)) wrong++;
          }
        }
      }
    }
    expect(wrong).toBe(0);
  });

  it('reads every Python-written line (reference files and memoir_ref.py gen) as the slow path does', () => {
    const lines = pythonLines();
    expect(lines.length).toBeGreaterThanOrEqual(205);
    const out = new ScannedLine();
    const accepted = lines.filter((l) => agrees(Buffer.from(l), out)).length;
    expect(accepted).toBe(lines.length); // canonical Python lines never need the slow path
  });

  it('takes canonical spellings: escapes, surrogate pairs, floats like 1e-05, -0.0', () => {
    const base = encodeEntry({
      scene_id: 's',
      agent: 'metis',
      source: 'specialist_proposed',
      context: null,
      narrative_beat: null,
      agent_proposed: 'x',
      player_response: null,
      affinity_delta: 0,
      training_label: {
        preference_pair: [
          { text: 'a', score: 0 },
          { text: 'b', score: 1 },
        ],
        weight: 1,
      },
      split: { shared_eligible: true, private_only: false },
    });
    const variants = [
      base.replace(
        '"agent_proposed":"x"',
        '"agent_proposed":"tab\\t quote\\" slash\\/ back\\\\ nl\\n \\u00e9 \\ud83d\\ude00 \\u0000"',
      ),
      base.replace('"affinity_delta":0.0', '"affinity_delta":1e-05'),
      base.replace('"affinity_delta":0.0', '"affinity_delta":-0.0'),
      base.replace('"affinity_delta":0.0', '"affinity_delta":-1.5E+3'),
    ];
    const out = new ScannedLine();
    for (const v of variants) expect(agrees(Buffer.from(v), out), v).toBe(true);
    expect(scanLine(Buffer.from(variants[3] as string), 0, Buffer.byteLength(variants[3] as string), out)).toBe(true);
    expect(Object.is(out.affinityDelta, -1500)).toBe(true);
  });

  it('falls back on what it must not decide: lone surrogates, overflow, bad numbers, whitespace, duplicate or unknown keys', () => {
    const base = METIS_X;
    const rejected = [
      base.replace('"agent_proposed":"x"', '"agent_proposed":"\\ud800"'),
      base.replace('"agent_proposed":"x"', '"agent_proposed":"\\udc00\\ud800"'),
      base.replace('"affinity_delta":0.0', '"affinity_delta":1e400'),
      base.replace('"affinity_delta":0.0', '"affinity_delta":01'),
      base.replace('"affinity_delta":0.0', '"affinity_delta":1.'),
      // pydantic keeps these as written (a float score stays a float; an integer -0 is 0.0): not the layout taken
      base.replace('"affinity_delta":0.0', '"affinity_delta":-0'),
      base.replace('"affinity_delta":0.0', '"affinity_delta":1'),
      base.replace(
        '"split":{"shared_eligible":true',
        '"split":{"shared_eligible":true,"private_only":true,"x":{"shared_eligible":true',
      ),
      base.replace('"agent":"metis"', '"agent":"Metis"'),
      base.replace('"agent":"metis"', '"agent":"metis","agent":"puck"'),
      base.replace('"agent":"metis"', '"agent": "metis"'),
      base.replace('"agent_proposed":"x"', '"agent_proposed":"a\tb"'),
      `${base.slice(0, -1)},"unknown":1}`,
      `${base.slice(0, -1)},"likert":7}`,
      `${base.slice(0, -1)},"entry_type":"episode","interrupt":{"interrupting_agent":"metis","target_agent":"metis","target_turn":"t","reason_class":"care","visibility":"public"}}`,
      `${base} `,
      base.slice(0, -1),
      base.replace('"private_only":false', '"private_only":true'),
      `${base.slice(0, -1)},"entry_id":"${'A'.repeat(65)}"}`,
    ];
    const out = new ScannedLine();
    for (const r of rejected) expect(scanLine(Buffer.from(r), 0, Buffer.byteLength(r), out), r).toBe(false);
  });

  it('refuses raw control characters in strings at every position of a 32-bit word', () => {
    const out = new ScannedLine();
    for (const c of [0x00, 0x01, 0x09, 0x0b, 0x0d, 0x1f]) {
      for (let k = 0; k < 9; k++) {
        const text = `${'a'.repeat(k)}${String.fromCharCode(c)}${'b'.repeat(9 - k)}`;
        const line = METIS_X.replace('"agent_proposed":"x"', `"agent_proposed":"${text}"`);
        expect(scanLine(Buffer.from(line), 0, Buffer.byteLength(line), out), JSON.stringify(text)).toBe(false);
      }
    }
    const ok = `${'a'.repeat(64)}`;
    const line = METIS_X;
    expect(agrees(Buffer.from(`${line.slice(0, -1)},"entry_id":"${ok}"}`), out)).toBe(true); // 64 characters: the maximum
  });

  it('property: written lines (odd texts, respelled numbers, every extension) are read exactly as the slow path reads them', () => {
    const out = new ScannedLine();
    let accepted = 0;
    fc.assert(
      fc.property(writtenLine, (line) => {
        if (agrees(Buffer.from(line), out)) accepted++;
      }),
      { numRuns: 1500 },
    );
    expect(accepted).toBeGreaterThan(25); // the property is not vacuous (most generated lines are meant to be odd, and host contexts fall back)
  });

  it('property: every line kourai writes for a valid entry is taken by the scanner (no needless fall-back)', () => {
    const out = new ScannedLine();
    fc.assert(
      fc.property(fc.oneof(kouraiEntry, upstreamEntry), (e) => {
        const line = encodeEntry(e as MemoirLine);
        if (slowView(line) === undefined) return; // e.g. a lone surrogate the writer would refuse
        if (e.context !== null && !isKouraiContext(e.context as never)) return; // a host's own context: read by the slow path
        expect(agrees(Buffer.from(line), out), line).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: mutated lines are never accepted when the slow path rejects them, and read alike when both accept', () => {
    const out = new ScannedLine();
    fc.assert(
      fc.property(writtenLine, fc.array(mutation, { minLength: 1, maxLength: 3 }), (line, muts) => {
        agrees(mutate(Buffer.from(line), muts), out);
      }),
      { numRuns: 3000 },
    );
  });

  it('scans a line in the middle of a larger buffer without reading past its end', () => {
    const line = encodeEntry({
      scene_id: 's',
      agent: 'metis',
      source: 'specialist_proposed',
      context: null,
      narrative_beat: null,
      agent_proposed: 'x',
      player_response: null,
      affinity_delta: 0.5,
      training_label: null,
      split: { shared_eligible: true, private_only: false },
    });
    const buf = Buffer.from(`${line}\n${line}\n`);
    const out = new ScannedLine();
    expect(scanLine(buf, line.length + 1, 2 * line.length + 1, out)).toBe(true);
    expect(out.string('agent_proposed')).toBe('x');
    // cut short by one byte, the rest of the buffer must not complete it
    expect(scanLine(buf, 0, line.length - 1, out)).toBe(false);
  });
});
