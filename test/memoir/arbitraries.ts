import fc from 'fast-check';
import { AGENTS } from '../../src/memoir/format/agents.js';
import {
  ENTRY_TYPES,
  FELT,
  REASON_CLASSES,
  RESPONSE_KINDS,
  SOURCES,
  VISIBILITIES,
} from '../../src/memoir/format/sources.js';

/** Any text, including emoji, CJK, quotes, backslashes and control characters. */
export const text = fc.string({ unit: 'binary', maxLength: 60 });
export const float = fc.double({ noNaN: true, noDefaultInfinity: true });

const KNOWN_CONTEXT_KEYS = new Set(['task_type', 'transcript_hash', 'preceding_agents', '__proto__']);
/** Keys a host may add, integer-like ones included (JS would move those to the front). */
const hostKey = fc
  .oneof(fc.string({ maxLength: 10, unit: 'binary' }), fc.constantFrom('host', '0', '7', '10', '01', '-1', 'é'))
  .filter((k) => !KNOWN_CONTEXT_KEYS.has(k));
/** Any JSON value, as a JS value (integral numbers stand for ints). */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(text, fc.integer(), float, fc.boolean(), fc.constant(null)),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(hostKey, tie('v'), { maxKeys: 3 }),
  ),
})).v;
/** The context kourai writes: its three keys, in order. */
export const kouraiContext = fc.record({
  task_type: text,
  transcript_hash: text,
  preceding_agents: fc.array(fc.constantFrom(...AGENTS), { maxLength: 4 }),
});
/** A Python host's context: any of the known keys (typed), and keys of its own around them. */
export const hostContext = fc
  .tuple(
    fc.dictionary(hostKey, jsonValue, { maxKeys: 3 }),
    fc.record(
      {
        task_type: text,
        transcript_hash: text,
        preceding_agents: fc.array(fc.constantFrom(...AGENTS), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(hostKey, jsonValue, { maxKeys: 2 }),
  )
  .map(([before, known, after]) => ({ ...before, ...known, ...after }) as Record<string, unknown>);

export const upstreamEntry = fc.record({
  scene_id: fc.string({ maxLength: 40, unit: 'binary' }),
  agent: fc.constantFrom(...AGENTS),
  source: fc.constantFrom(...SOURCES),
  context: fc.option(fc.oneof(kouraiContext, hostContext), { nil: null }),
  narrative_beat: fc.option(text, { nil: null }),
  agent_proposed: fc.option(text, { nil: null }),
  player_response: fc.option(
    fc.record({
      kind: fc.constantFrom(...RESPONSE_KINDS),
      delta: fc.option(text, { nil: null }),
      felt: fc.option(fc.constantFrom(...FELT), { nil: null }),
    }),
    { nil: null },
  ),
  affinity_delta: float,
  training_label: fc.option(
    fc.record({
      preference_pair: fc.option(
        fc.tuple(
          fc.record({ text, score: fc.integer({ min: -3, max: 3 }) }),
          fc.record({ text, score: fc.integer({ min: -3, max: 3 }) }),
        ),
        { nil: null },
      ),
      weight: float,
    }),
    { nil: null },
  ),
  split: fc.constantFrom(
    { shared_eligible: true, private_only: false },
    { shared_eligible: false, private_only: true },
    { shared_eligible: false, private_only: false },
  ),
});

export const interrupt = fc.record({
  interrupting_agent: fc.constantFrom(...AGENTS),
  target_agent: fc.constantFrom(...AGENTS),
  target_turn: text,
  reason_class: fc.constantFrom(...REASON_CLASSES),
  visibility: fc.constantFrom(...VISIBILITIES),
});

export const kouraiEntry = fc
  .tuple(
    upstreamEntry,
    fc.constantFrom(...ENTRY_TYPES),
    fc.option(interrupt, { nil: undefined }),
    fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }),
  )
  .map(([e, entry_type, intr, at]) => ({
    ...e,
    entry_id: '01M3VCAZ7Y3T5Q9B6HQP9WD1P0',
    recorded_at: at.toISOString(),
    entry_type: intr ? ('interrupt' as const) : entry_type,
    ...(intr ? { interrupt: intr } : {}),
  }));
