import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { pyFloat, pyInt, pyString } from '../../../src/memoir/format/python-json.js';
import { EXTENSION_KEYS, STANDARD_KEYS } from '../../../src/memoir/format/schema.js';
import { float, kouraiEntry, text, upstreamEntry } from '../arbitraries.js';

/**
 * The field-by-field encoder encodeEntry replaced (for speed), kept here as the reference: the two
 * must write the same bytes for every entry. The pydantic test (python-compat) proves the reference
 * layout against Python itself.
 */
type Obj = Record<string, any>;
/** A JS value as pydantic writes the same value (integral numbers are ints). */
function referenceValue(v: unknown): string {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? String(v) : pyFloat(v);
  if (Array.isArray(v)) return `[${v.map(referenceValue).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .map((k) => `${pyString(k)}:${referenceValue((v as Obj)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
function referenceEncode(e: Obj): string {
  const ns = (v: string | null): string => (v === null ? 'null' : pyString(v));
  const c = e.context as Obj | null;
  const r = e.player_response as Obj | null;
  const t = e.training_label as Obj | null;
  let s = '{"scene_id":' + pyString(e.scene_id);
  s += ',"agent":' + pyString(e.agent);
  s += ',"source":' + pyString(e.source);
  s += ',"context":' + (c === null ? 'null' : referenceValue(c));
  s += ',"narrative_beat":' + ns(e.narrative_beat);
  s += ',"agent_proposed":' + ns(e.agent_proposed);
  s +=
    ',"player_response":' +
    (r === null ? 'null' : `{"kind":${pyString(r.kind)},"delta":${ns(r.delta)},"felt":${ns(r.felt)}}`);
  s += ',"affinity_delta":' + pyFloat(e.affinity_delta);
  const pp =
    t === null || t.preference_pair === null
      ? 'null'
      : `[${(t.preference_pair as Obj[]).map((p) => `{"text":${pyString(p.text)},"score":${pyInt(p.score)}}`).join(',')}]`;
  s += ',"training_label":' + (t === null ? 'null' : `{"preference_pair":${pp},"weight":${pyFloat(t.weight)}}`);
  s +=
    ',"split":{"shared_eligible":' +
    String(e.split.shared_eligible) +
    ',"private_only":' +
    String(e.split.private_only) +
    '}';
  for (const k of EXTENSION_KEYS) if (e[k] !== undefined) s += `,${pyString(k)}:${JSON.stringify(e[k])}`;
  // any other top-level key is left out, as model_dump_json() leaves it out
  return s + '}';
}

describe('encodeEntry writes the same bytes as the field-by-field reference (property)', () => {
  // Extra keys inside nested objects (a context keeps them; other objects drop them), unknown top-level keys (left out),
  // integer-like keys (which objects order first) and any text.
  const withExtras = fc
    .tuple(
      fc.oneof(upstreamEntry, kouraiEntry),
      fc.dictionary(fc.oneof(text, fc.constantFrom('1', '0', 'zeta', '__proto__x')), fc.jsonValue({ maxDepth: 2 }), {
        maxKeys: 3,
      }),
      fc.boolean(),
    )
    .map(([e, extra, nested]) => {
      const v: Obj = { ...(e as Obj) };
      for (const [k, x] of Object.entries(extra))
        if (!(STANDARD_KEYS as readonly string[]).includes(k) && !(EXTENSION_KEYS as readonly string[]).includes(k))
          v[k] = x;
      if (nested && v.context) v.context = { ...v.context, stray: 1 };
      if (nested && v.player_response) v.player_response = { stray: true, ...v.player_response };
      return v;
    });

  // The usual label: the pair repeats the proposal and the correction (the encoder reuses them).
  const repeatingPair = fc
    .tuple(fc.oneof(upstreamEntry, kouraiEntry), fc.constantFrom('proposed', 'delta', 'both', 'swapped'), float)
    .map(([e, which, weight]) => {
      const v: Obj = { ...(e as Obj) };
      const delta = (v.player_response as Obj | null)?.delta ?? null;
      const a = which === 'delta' ? 'x' : (v.agent_proposed ?? 'p');
      const b = which === 'proposed' ? 'y' : (delta ?? 'd');
      v.training_label = {
        preference_pair:
          which === 'swapped'
            ? [
                { text: b, score: 1 },
                { text: a, score: 0 },
              ]
            : [
                { text: a, score: 0 },
                { text: b, score: 1 },
              ],
        weight,
      };
      return v;
    });

  // Lone surrogates (JSON.stringify writes them as \udXXX; the append check then refuses the line).
  const lone = fc
    .array(fc.oneof(fc.constantFrom('\ud800', '\udfff', '\ud83d\ude00', 'a', '"', '\\', '\n'), text), { maxLength: 6 })
    .map((xs) => xs.join(''));
  const withLone = fc
    .tuple(fc.oneof(upstreamEntry, kouraiEntry), lone, lone)
    .map(([e, a, b]) => ({ ...(e as Obj), agent_proposed: a, scene_id: `s${b}` }));

  it('for generated entries, with extra keys and arbitrary text', () => {
    fc.assert(
      fc.property(fc.oneof(upstreamEntry, kouraiEntry, withExtras, repeatingPair, withLone), (e) => {
        expect(encodeEntry(e as never)).toBe(referenceEncode(e as Obj));
      }),
      { numRuns: 3000 },
    );
  });
});
