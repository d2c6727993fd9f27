import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { LineWriter } from '../../../src/memoir/format/encode-bytes.js';
import { checkOutgoingLine, MAX_LINE_BYTES } from '../../../src/memoir/format/limits.js';
import { float, kouraiEntry, upstreamEntry } from '../arbitraries.js';

/**
 * The byte encoder (what `append` writes) against the string encoder (held to pydantic by
 * python-compat and to a field-by-field reference by encode-equivalence): the same bytes for every
 * entry the string path would write, and a refusal exactly where the string path's check throws.
 */
type Obj = Record<string, any>;

/** What the string path writes for `e` (line + newline), or undefined where its check refuses the line. */
function stringPath(e: Obj): Buffer | undefined {
  const line = encodeEntry(e as never);
  try {
    checkOutgoingLine(line, 'x');
  } catch {
    return undefined;
  }
  return Buffer.from(`${line}\n`, 'utf8');
}

// Text of every kind and length: short strings take the byte loop, long ones (> 64 UTF-16 units)
// the regex test + native write when clean, the loop again when they need an escape; quotes,
// backslashes, control characters, non-ASCII, surrogate pairs and lone surrogates mixed in.
const piece = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme-ascii', minLength: 20, maxLength: 120 }),
  fc.constantFrom(
    '"',
    '\\',
    '\n',
    '\t',
    '\u0000',
    '\u001f',
    '\u007f',
    'é',
    '€',
    '\u2028',
    '\ud83d\ude00',
    '\ud800',
    '\udfff',
    'x'.repeat(70),
  ),
);
const anyText = fc.array(piece, { maxLength: 6 }).map((xs) => xs.join(''));
const cleanLong = fc
  .string({ unit: 'grapheme-ascii', minLength: 65, maxLength: 400 })
  .map((s) => s.replace(/["\\]/g, '_'));

const entryWithText = fc
  .tuple(
    fc.oneof(upstreamEntry, kouraiEntry),
    anyText,
    fc.oneof(anyText, cleanLong),
    fc.oneof(anyText, cleanLong),
    fc.constantFrom('proposed', 'delta', 'own', 'none'),
    float,
    fc.integer({ min: 0, max: 3 }),
  )
  .map(([e, scene, proposed, delta, pair, weight, extra]) => {
    const v: Obj = { ...(e as Obj), scene_id: `s${scene}`, agent_proposed: proposed };
    if (v.player_response) v.player_response = { ...v.player_response, delta };
    if (pair !== 'none') {
      const a = pair === 'proposed' ? proposed : 'chosen';
      const b = pair === 'delta' && v.player_response ? delta : `own ${delta}`;
      v.training_label = {
        preference_pair: [
          { text: a, score: 0 },
          { text: b, score: 1 },
        ],
        weight,
      };
    }
    if (extra === 1) v.comment = scene;
    if (extra === 2) v.episode = { title: proposed, n: 3 };
    if (extra === 3) v.kept_from_python = { note: delta };
    return v;
  });

describe('LineWriter writes what encodeEntry + the outgoing check would (property)', () => {
  it('the same bytes, or a refusal where the check refuses', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(upstreamEntry, kouraiEntry, entryWithText), { minLength: 1, maxLength: 8 }),
        (entries) => {
          // a small first buffer: most batches grow it
          const w = new LineWriter(64);
          const expected: Buffer[] = [];
          for (const e of entries) {
            const want = stringPath(e as Obj);
            const before = w.at;
            expect(w.writeEntry(e as never)).toBe(want !== undefined);
            if (want) expected.push(want);
            else expect(w.at).toBe(before); // a refusal leaves nothing behind
          }
          expect(w.bytes().equals(Buffer.concat(expected))).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses a line over MAX_LINE_BYTES (the string path words the error), accepts one at the limit', () => {
    const base: Obj = {
      scene_id: 's',
      agent: 'metis',
      source: 'specialist_proposed',
      context: null,
      narrative_beat: null,
      agent_proposed: '',
      player_response: null,
      affinity_delta: 0,
      training_label: null,
      split: { shared_eligible: false, private_only: true },
    };
    const overhead = Buffer.byteLength(encodeEntry(base as never));
    const atLimit = { ...base, agent_proposed: 'a'.repeat(MAX_LINE_BYTES - overhead) };
    const w = new LineWriter(16);
    expect(w.writeEntry(atLimit as never)).toBe(true);
    expect(w.at).toBe(MAX_LINE_BYTES + 1);
    // one byte over, as a two-byte character; and a string longer than the limit by itself
    expect(w.writeEntry({ ...base, agent_proposed: `${'a'.repeat(MAX_LINE_BYTES - overhead - 1)}é` } as never)).toBe(
      false,
    );
    expect(w.writeEntry({ ...base, narrative_beat: 'b'.repeat(MAX_LINE_BYTES + 1) } as never)).toBe(false);
    expect(w.at).toBe(MAX_LINE_BYTES + 1);
  });
});
