import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastInspectOptions } from '../../src/commands/memoir/inspect.js';
import { options as inspectSchema } from '../../src/commands/memoir/inspect-options.js';
import { fastIndexOptions } from '../../src/commands/memoir/index-cmd.js';
import { options as indexSchema } from '../../src/commands/memoir/index-options.js';
import { fastVerifyOptions } from '../../src/commands/memoir/verify.js';
import { options as verifySchema } from '../../src/commands/memoir/verify-options.js';
import { fastScoreOptions } from '../../src/commands/score.js';
import { options as scoreSchema } from '../../src/commands/score-options.js';
import { AGENTS } from '../../src/memoir/format/agents.js';
import { ENTRY_TYPES, SOURCES } from '../../src/memoir/format/sources.js';

/**
 * Lazy options (src/commands/types.ts): a command on a start-up path checks its flags without zod
 * and loads its zod schema (the schema of record) only when the fast check does not vouch for
 * them. For raw options shaped as commander hands them over, valid or not:
 *   fast accepts ⇒ zod accepts, with the same values;
 *   zod accepts a command line ⇒ fast accepts it (so zod is never loaded for a valid one).
 * Values commander never passes (null, numbers, objects) are generated too: the fast side must
 * leave them to zod, whatever zod makes of them.
 */
const defined = (o: unknown): unknown => JSON.parse(JSON.stringify(o, (_k, v: unknown) => (Object.is(v, -0) ? 0 : v)));

function agree(
  fast: (raw: Record<string, unknown>) => unknown,
  schema: { safeParse(raw: unknown): { success: boolean; data?: unknown } },
  raw: Record<string, unknown>,
): void {
  const f = fast(raw);
  const z = schema.safeParse(raw);
  if (f !== undefined) {
    expect(z.success).toBe(true);
    expect(defined(f)).toEqual(defined(z.data));
  }
  if (z.success && !hasOdd(raw)) expect(f).toBeDefined();
}

/** A value commander may pass for a flag, or something else (the fast side must not vouch for it). */
const odd = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string(),
  fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 1 }),
);
/** Values commander never gives for that flag are wrapped (Odd) while generated, and unwrapped in rawOf. */
class Odd {
  constructor(readonly v: unknown) {}
}
const ODD = Symbol('odd');
const hasOdd = (raw: Record<string, unknown>): boolean => ODD in raw;
const opt = <T>(a: fc.Arbitrary<T>) =>
  fc.option(
    fc.oneof(
      { weight: 4, arbitrary: a as fc.Arbitrary<unknown> },
      { weight: 1, arbitrary: odd.map((v) => new Odd(v)) },
    ),
    { nil: undefined, freq: 3 },
  );
const list = (values: readonly string[]) =>
  fc.array(
    fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...values) },
      { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
    ),
    { maxLength: 3 },
  );
const numberText = fc.oneof(
  fc.integer({ min: -3, max: 300 }).map(String),
  fc.double({ min: -2, max: 2, noNaN: true }).map(String),
  fc.constantFrom(
    '',
    ' ',
    ' 5 ',
    '0x10',
    '1e3',
    'Infinity',
    '-0',
    'abc',
    '1.5',
    '9007199254740993',
    'NaN',
    '.5',
    '1_000',
  ),
);
const timeText = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-10-01', '2026-11-22T10:00:00Z', 'yesterday', '', '2026-13-01', 'Nov 3 2026', '0', '2026-02-30'),
);

const rawOf = (shape: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(shape, { requiredKeys: [] }).map((r) => {
    const raw: Record<string | symbol, unknown> = {};
    for (const [k, v] of Object.entries(r)) {
      if (v === undefined) continue;
      if (v instanceof Odd) raw[ODD] = true;
      raw[k] = v instanceof Odd ? v.v : v;
    }
    return raw as Record<string, unknown>;
  });

describe('lazy options agree with their zod schema (property)', () => {
  it('memoir inspect', () => {
    const raw = rawOf({
      memoir: opt(fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 })),
      agent: opt(list(AGENTS)),
      source: opt(list(SOURCES)),
      type: opt(list(ENTRY_TYPES)),
      split: opt(fc.constantFrom('shared', 'private', 'public')),
      scene: opt(fc.string({ maxLength: 8 })),
      since: opt(timeText),
      until: opt(timeText),
      text: opt(fc.string({ maxLength: 8 })),
      limit: opt(numberText),
      allRevisions: opt(fc.boolean()),
      json: opt(fc.boolean()),
      ndjson: opt(fc.boolean()),
      // globals commander adds, which both sides ignore
      color: fc.option(fc.boolean(), { nil: undefined }),
      quiet: fc.option(fc.boolean(), { nil: undefined }),
    });
    fc.assert(
      fc.property(raw, (r) => agree(fastInspectOptions, inspectSchema, r)),
      { numRuns: 3000 },
    );
  });

  it('memoir verify', () => {
    const raw = rawOf({
      memoir: opt(fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 })),
      json: opt(fc.boolean()),
    });
    fc.assert(
      fc.property(raw, (r) => agree(fastVerifyOptions, verifySchema, r)),
      { numRuns: 1000 },
    );
    expect(fastVerifyOptions({ memoir: ['m.jsonl'], json: true })).toEqual({ memoir: ['m.jsonl'], json: true });
  });

  it('memoir index', () => {
    const raw = rawOf({
      memoir: opt(fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 })),
      rebuild: opt(fc.boolean()),
      fullText: opt(fc.boolean()),
      json: opt(fc.boolean()),
    });
    fc.assert(
      fc.property(raw, (r) => agree(fastIndexOptions, indexSchema, r)),
      { numRuns: 1000 },
    );
    expect(fastIndexOptions({ memoir: ['m.jsonl'], rebuild: true })).toEqual({
      memoir: ['m.jsonl'],
      rebuild: true,
      fullText: false,
      json: false,
    });
  });

  it('score', () => {
    const raw = rawOf({
      agent: fc.oneof(
        fc.constantFrom(...AGENTS),
        fc.constantFrom('technee', 'zeus', ''),
        odd.map((v) => new Odd(v)),
      ),
      candidates: opt(fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 })),
      file: opt(fc.string({ maxLength: 5 })),
      stdin: opt(fc.boolean()),
      taskType: opt(fc.string({ maxLength: 5 })),
      use: opt(fc.constantFrom('both', 'bond', 'council', 'all')),
      lean: opt(numberText),
      json: opt(fc.boolean()),
    });
    fc.assert(
      fc.property(raw, (r) => agree(fastScoreOptions, scoreSchema, r)),
      { numRuns: 3000 },
    );
  });

  it('the usual command lines take the fast path', () => {
    expect(
      fastInspectOptions({
        agent: ['aidos'],
        split: 'shared',
        limit: '20',
        json: true,
        memoir: ['m.jsonl'],
        source: [],
        type: [],
      }),
    ).toEqual({
      memoir: ['m.jsonl'],
      agent: ['aidos'],
      source: [],
      type: [],
      split: 'shared',
      limit: 20,
      allRevisions: false,
      json: true,
      ndjson: false,
    });
    expect(fastScoreOptions({ agent: 'techne', candidates: ['a', 'b'] })).toMatchObject({
      agent: 'techne',
      candidates: ['a', 'b'],
      use: 'both',
      stdin: false,
      json: false,
    });
    expect(fastScoreOptions({ agent: 'technee' })).toBeUndefined(); // zod words it: did you mean "techne"?
  });
});
