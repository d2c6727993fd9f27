import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { encodeEntry } from '../../../../src/memoir/format/encode.js';
import type { MemoirLine } from '../../../../src/memoir/format/schema.js';
import { kouraiEntry, upstreamEntry } from '../../arbitraries.js';

/** Memoir lines for the scanner's tests: as writers lay them out, odd, respelled and mutated. */

/** Text with what makes JSON strings hard: escapes, controls, surrogates (paired and lone), non-ASCII. */
const hardText = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    ' ',
    '"',
    '\\',
    '/',
    '\n',
    '\t',
    '\u0000',
    '\u001f',
    '\u007f',
    'é',
    '日',
    '\u2028',
    '😀',
    '\ud800',
    '\udc00',
    '\ud83d',
    '\ude00',
    '\u{10ffff}',
  ),
  maxLength: 12,
});
export const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), hardText);

/** A JSON number as text, any spelling the grammar allows (and some it does not). */
export const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
  fc.constantFrom(
    '0.0',
    '-0.0',
    '-0',
    '1e-05',
    '1e-7',
    '1E5',
    '1e+16',
    '0.1e1',
    '1.0',
    '1e0',
    '5',
    '-3',
    '1e400',
    '-1e400',
    '1e-400',
    '123456789012345678',
    '0.30000000000000004',
    '9007199254740993',
    '01',
    '1.',
    '.5',
    '-',
    '1e',
    '+1',
    '0x10',
    'NaN',
    'Infinity',
    '1.5',
    '2.0e0',
  ),
  fc
    .tuple(
      fc.boolean(),
      fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,20}$/)),
      fc.option(fc.stringMatching(/^[0-9]{1,20}$/)),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{1,4}$/))),
    )
    .map(
      ([neg, int, frac, exp]) =>
        `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : exp.join('')}`,
    ),
);

const jsonObject = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });

const extensions = fc.record(
  {
    supersedes: fc.oneof(fc.constant('01M3VCAZ7Y3T5Q9B6HQP9WD1P1'), anyText),
    revision_reason: anyText,
    likert: fc.integer({ min: 0, max: 6 }),
    comment: anyText,
    episode: jsonObject,
    council: jsonObject,
    entry_id: fc.oneof(
      fc.constant('01M3VCAZ7Y3T5Q9B6HQP9WD1P0'),
      fc.string({ maxLength: 70 }),
      fc.string({ minLength: 62, maxLength: 67 }),
      anyText,
    ),
    recorded_at: fc.oneof(
      fc
        .date({ min: new Date('0001-01-01'), max: new Date('9999-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString()),
      fc.constantFrom(
        '2024-02-29T10:00:00Z',
        '2023-02-29T10:00:00.000Z',
        '2026-11-22T24:00:00.000Z',
        '2026-11-22T10:00:00+01:00',
        '2026-11-22T10:00:00.1234567Z',
        '2026-11-22T10:00Z',
        '2026-13-01T10:00:00.000Z',
        '2100-02-29T00:00:00.000Z',
        '2000-02-29T00:00:00.000Z',
        '2026-11-22 10:00:00Z',
        '2026-11-22T10:00:00.Z',
      ),
    ),
    interrupt: fc.constant(null),
  },
  { requiredKeys: [] },
);

/** Lines as kourai's writer lays them out, with extensions, odd texts and respelled numbers. */
export const writtenLine = fc
  .tuple(
    fc.oneof(kouraiEntry, upstreamEntry),
    extensions,
    fc.option(anyText, { nil: undefined }),
    fc.array(fc.tuple(fc.constantFrom('affinity_delta', 'weight', 'score', 'likert'), numberText), { maxLength: 3 }),
    fc.option(fc.record({ shared_eligible: fc.boolean(), private_only: fc.boolean() }), { nil: undefined }),
  )
  .map(([e, ext, agentText, numbers, split]) => {
    const entry = { ...e, ...ext } as MemoirLine & Record<string, unknown>;
    if (split !== undefined) entry.split = split;
    if ((e as Record<string, unknown>).interrupt !== undefined && ext.interrupt === null)
      entry.interrupt = (e as Record<string, unknown>).interrupt as never;
    if (agentText !== undefined) entry.agent_proposed = agentText;
    let line = encodeEntry(entry);
    for (const [key, num] of numbers) line = line.replace(new RegExp(`("${key}":)(-?[0-9][0-9.eE+-]*)`), `$1${num}`);
    return line;
  });

const MUTANT_BYTES = [
  0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x09, 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xed, 0xff, 0x30, 0x31,
  0x39, 0x2d, 0x2b, 0x2e, 0x65, 0x45, 0x6e, 0x74, 0x66, 0x75, 0x61, 0x7a,
];
export const mutation = fc.oneof(
  fc.record({
    op: fc.constant('set' as const),
    at: fc.nat(),
    byte: fc.oneof(fc.constantFrom(...MUTANT_BYTES), fc.integer({ min: 0, max: 255 })),
  }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), byte: fc.constant(0) }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), byte: fc.constantFrom(...MUTANT_BYTES) }),
);

export function mutate(line: Buffer, muts: { op: 'set' | 'delete' | 'insert'; at: number; byte: number }[]): Buffer {
  const b = [...line];
  for (const m of muts) {
    if (b.length === 0) break;
    const at = m.at % b.length;
    if (m.op === 'set') b[at] = m.byte;
    else if (m.op === 'delete') b.splice(at, 1);
    else b.splice(at, 0, m.byte);
  }
  return Buffer.from(b);
}

export function pythonLines(): string[] {
  const fixtures = ['python-written.jsonl', 'python-lenient-splits.jsonl'].flatMap((f) =>
    readFileSync(join('test', 'fixtures', 'memoir', f), 'utf8')
      .split('\n')
      .filter(Boolean),
  );
  const ref = ['../shared/reference/python/memoir_ref.py', '../../shared/reference/python/memoir_ref.py'].find((p) =>
    existsSync(p),
  );
  if (!ref) return fixtures;
  const dir = mkdtempSync(join(tmpdir(), 'kourai-scan-'));
  try {
    const out = join(dir, 'py.jsonl');
    const r = spawnSync('python3', [ref, 'gen', '400', '7', out], { encoding: 'utf8' });
    if (r.status !== 0) return fixtures;
    return [...fixtures, ...readFileSync(out, 'utf8').split('\n').filter(Boolean)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
