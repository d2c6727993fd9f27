import { closeSync, fstatSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { derivedId } from '../../src/memoir/format/entry-id.js';
import { ScannedLine, scanLine } from '../../src/memoir/format/scan/canonical-line.js';
import { encodeRows, RowDecoder, type DecodedRow, type RowContent } from '../../src/memoir-index/index-rows.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * The index reads canonical lines with the byte scanner (src/memoir/format/scan/) and every other line
 * with JSON.parse + the schema. Both must give the same row and the same search text, whatever
 * the line holds: escapes, characters outside ASCII and the BMP, empty strings, other time zones.
 */
let dir: string;
beforeEach(() => (dir = tempDir()));
afterEach(() => removeDir(dir));

function rows(file: string, scan: boolean, content?: RowContent): { values: DecodedRow['values']; text: string }[] {
  const fd = openSync(file, 'r');
  try {
    const out: { values: DecodedRow['values']; text: string }[] = [];
    const decoder = new RowDecoder();
    for (const b of encodeRows(fd, {
      fromOffset: 0,
      fromLine: 1,
      untilOffset: fstatSync(fd).size,
      batchEntries: 700,
      priorOccurrences: () => 0,
      scan,
      ...(content ? { content } : {}),
    })) {
      decoder.each(b, (values, text) => out.push({ values: [...values] as DecodedRow['values'], text }));
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/**
 * JSON.stringify with the float fields written as pydantic writes them (`0.0`, not `0`): an integer
 * there is a valid but not canonical spelling, which the scanner leaves to the parser.
 */
const stringify = (x: Record<string, unknown>): string =>
  JSON.stringify(x).replace(/"(affinity_delta|weight)":(-?[0-9]+)([,}])/g, '"$1":$2.0$3');

/** Variants of a line, keys kept in their order (JSON.stringify keeps insertion order). */
function variants(line: string, i: number): string[] {
  const e = JSON.parse(line) as Record<string, unknown>;
  const out: string[] = [];
  const v = (change: (x: Record<string, unknown>) => void): void => {
    const x = JSON.parse(line) as Record<string, unknown>;
    change(x);
    out.push(stringify(x));
  };
  if (typeof e.agent_proposed === 'string') {
    v((x) => (x.agent_proposed = `naïve café — ${i} 🦊 "quoted"\nsecond line\t\\`));
    v((x) => (x.agent_proposed = ''));
    v((x) => (x.agent_proposed = `plain 🦊 and é, no escapes ${i}`)); // bytes copied as they are
    v((x) => (x.agent_proposed = `ascii escapes only:\n"two" C:\\users\\u ${i}`)); // \\u here is a backslash, then u
  }
  if (typeof e.narrative_beat === 'string') v((x) => (x.narrative_beat = `the_beat_${i}_é`));
  if (typeof e.recorded_at === 'string') v((x) => (x.recorded_at = '2026-10-01T11:04:59.624123+02:00'));
  v((x) => (x.scene_id = `session-0000000${i % 10}.turn-${i}`));
  // a \u escape of a character outside ASCII in an otherwise ASCII line
  if (typeof e.agent_proposed === 'string')
    out.push(stringify({ ...e, agent_proposed: `caf\u00e9 ${i}` }).replace('é', '\\u00e9'));
  // \u escapes for plain characters: still the same text
  out.push(line.replace(/"scene_id":"session-/, '"scene_id":"\\u0073ession-'));
  return out;
}

describe('index rows: byte scanner and parser agree', () => {
  it('the same rows and search text from both paths, for canonical, escaped and Python lines', () => {
    const lines = synthLines(3, 1_500);
    const all = lines.flatMap((l, i) => (i % 7 === 0 ? [l, ...variants(l, i)] : [l]));
    const python = all.find((l) => !l.includes('"entry_id"')) as string;
    all.push(python, python); // identical Python lines: ~2, ~3
    const file = join(dir, 'memoir.jsonl');
    writeFileSync(file, `${all.join('\n')}\n`);
    const fast = rows(file, true);
    const slow = rows(file, false);
    expect(fast.length).toBe(all.length);
    expect(fast).toEqual(slow);
    // The scanner takes the variants too (otherwise this would compare the slow path with itself).
    const out = new ScannedLine();
    const scanned = (l: string): boolean => scanLine(Buffer.from(l), 0, Buffer.byteLength(l), out);
    expect(all.filter(scanned).length / all.length).toBeGreaterThan(0.95);
    for (const needle of [
      'caf\\u00e9',
      'ascii escapes only:\\n',
      'plain 🦊',
      '🦊 \\"quoted',
      '\\u0073ession',
      '+02:00',
      'the_beat_',
      '"agent_proposed":""',
    ])
      expect(all.filter((l) => l.includes(needle) && scanned(l)).length).toBeGreaterThan(10);
    const ids = fast.filter((r) => r.values[3].startsWith(derivedId(python))).map((r) => r.values[3]);
    expect(ids).toEqual([derivedId(python, 1), derivedId(python, 2), derivedId(python, 3)]);
    const emoji = fast.find((r) => r.text.includes('🦊'));
    expect(emoji?.text).toMatch(/naïve café — \d+ 🦊 "quoted"\nsecond line\t\\/);
    expect(fast.some((r) => /the beat \d+ é/.test(r.text))).toBe(true);
    expect(fast.some((r) => r.values[12] === '2026-10-01T09:04:59.624Z')).toBe(true);

    // What the lazy full-text build reads (content 'text': line and search text only) and a bulk load writes (content 'rows': no text).
    for (const scan of [true, false]) {
      expect(textRows(file, scan)).toEqual(fast.map((r) => ({ line: r.values[0], text: r.text })));
      expect(rows(file, scan, 'rows')).toEqual(fast.map((r) => ({ values: r.values, text: '' })));
    }
  });
});

function textRows(file: string, scan: boolean): { line: number; text: string }[] {
  const fd = openSync(file, 'r');
  try {
    const out: { line: number; text: string }[] = [];
    const decoder = new RowDecoder();
    for (const b of encodeRows(fd, {
      fromOffset: 0,
      fromLine: 1,
      untilOffset: fstatSync(fd).size,
      batchEntries: 700,
      priorOccurrences: () => 0,
      scan,
      content: 'text',
    })) {
      decoder.eachText(b, (line, text) => out.push({ line, text }));
    }
    return out;
  } finally {
    closeSync(fd);
  }
}
