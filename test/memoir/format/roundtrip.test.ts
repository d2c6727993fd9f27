import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { parseLine } from '../../../src/memoir/format/parse.js';
import { STANDARD_KEYS } from '../../../src/memoir/format/schema.js';
import { decideSplit, entryTypeOf } from '../../../src/memoir/format/split-rule.js';

const lines = (name: string): string[] =>
  readFileSync(new URL(`../../fixtures/memoir/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');

describe('python-written.jsonl (200 lines from the upstream pydantic writer)', () => {
  const ref = lines('python-written.jsonl');

  it('has 200 lines', () => expect(ref).toHaveLength(200));

  it('reads every line with exactly the values Python wrote', () => {
    for (const [i, line] of ref.entries()) {
      const parsed = parseLine(line);
      expect(parsed.ok, `line ${i + 1}: ${parsed.ok ? '' : parsed.message}`).toBe(true);
      if (!parsed.ok) continue;
      const { entry_id, ...values } = parsed.entry;
      expect(values).toEqual(JSON.parse(line));
      expect(entry_id).toMatch(/^py_[0-9A-Z]{24}$/);
    }
  });

  it('re-encodes every line byte for byte (key order, floats, raw UTF-8)', () => {
    for (const line of ref) {
      const parsed = parseLine(line);
      if (!parsed.ok) throw new Error(parsed.message);
      const { entry_id: _id, ...values } = parsed.entry;
      expect(encodeEntry(values as never)).toBe(line);
    }
  });

  it('writes the ten standard keys first, in upstream order, even with extensions', () => {
    const parsed = parseLine(ref[0] as string);
    if (!parsed.ok) throw new Error(parsed.message);
    const withExt = encodeEntry({
      ...parsed.entry,
      recorded_at: '2026-11-22T10:00:00.000Z',
      entry_type: 'pipeline_turn',
    });
    expect(Object.keys(JSON.parse(withExt))).toEqual([...STANDARD_KEYS, 'entry_id', 'recorded_at', 'entry_type']);
    expect(withExt.startsWith((ref[0] as string).slice(0, -1))).toBe(true);
  });

  it('derives stable ids: same bytes, same id; identical lines numbered', () => {
    const a = parseLine(ref[5] as string);
    const b = parseLine(ref[5] as string);
    expect(a.ok && b.ok && a.entry.entry_id === b.entry.entry_id).toBe(true);
    let n = 0;
    const second = parseLine(ref[5] as string, () => ++n + 1);
    expect(second.ok && second.entry.entry_id.endsWith('~2')).toBe(true);
  });
});

describe('python-lenient-splits.jsonl', () => {
  const ref = lines('python-lenient-splits.jsonl');

  it('reads all five lines (they are valid upstream) and never treats any as shareable', () => {
    const verdicts = ref.map((l) => {
      const p = parseLine(l);
      if (!p.ok) throw new Error(p.message);
      return decideSplit({ ...p.entry, entry_type: entryTypeOf(p.entry) });
    });
    expect(verdicts.map((v) => v.shareable)).toEqual([false, false, false, false, false]);
    // the first four claim shared: lenient; the fifth was made private on purpose: legitimate
    expect(verdicts.map((v) => v.lenient)).toEqual([true, true, true, true, false]);
    expect(verdicts.map((v) => v.reason)).toEqual([
      'bond_only_agent',
      'bond_only_agent',
      'bond_only_agent',
      'private_source',
      'marked_private',
    ]);
  });
});
