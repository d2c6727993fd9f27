import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { LineWriter } from '../../../src/memoir/format/encode-bytes.js';
import { parseLine } from '../../../src/memoir/format/parse.js';
import { STANDARD_KEYS, type MemoirEntry } from '../../../src/memoir/format/schema.js';
import { ScannedLine, scanLine } from '../../../src/memoir/format/scan/canonical-line.js';

/**
 * `context` is any JSON object (upstream `dict[str, Any] | None`). Host contexts are generated as
 * JSON text, not JS values, so that what JSON.parse cannot tell apart is in play: 1 and 1.0, ints
 * beyond 2^53, integer-like keys ("7" after "b"), a repeated key, escapes, whitespace.
 */

const model = fileURLToPath(new URL('../../fixtures/python/memoir_model.py', import.meta.url));
const probe = spawnSync('python3', ['-c', 'import pydantic; print(pydantic.VERSION)'], { encoding: 'utf8' });
const havePydantic = probe.status === 0;
const missing = `the pydantic context proof did NOT run: python3 cannot import pydantic (${(probe.error?.message ?? probe.stderr.trim().split('\n').pop() ?? '').trim() || `exit ${probe.status}`})`;
if (!havePydantic) process.stderr.write(`WARNING: ${missing}\n`);

function pydantic(lines: string[]): { ok: boolean; dump?: string; error?: string }[] {
  const r = spawnSync('python3', [model], { input: `${lines.join('\n')}\n`, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { ok: boolean; dump?: string; error?: string });
}

/** JSON text of a value, with the number forms a writer may choose. */
type Node =
  | { t: 'int'; v: bigint }
  | { t: 'float'; text: string }
  | { t: 'str'; text: string }
  | { t: 'lit'; text: string }
  | { t: 'arr'; items: Node[] }
  | { t: 'obj'; entries: [string, Node][] };

const ws = fc.constantFrom('', ' ', ' \t');
const key = fc.oneof(
  fc.string({ maxLength: 8, unit: 'binary' }),
  fc.constantFrom('host', 'a', '0', '1', '7', '10', '01', '-1', '4294967294', '4294967295', 'é', '日本', 'task_type_x'),
);
const floatText = fc.oneof(
  fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .map((x) => (Number.isInteger(x) && Math.abs(x) < 1e16 ? `${x}.0` : String(x))),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => x.toExponential()),
  fc.constantFrom('1.0', '-0.0', '0.5', '1E5', '1e-7', '2.50', '1e400', '-1e400', '1e+16', '123456789012345678.0'),
);
const strText = fc.string({ maxLength: 12, unit: 'grapheme' }).map((s) => JSON.stringify(s).replace(/é/g, '\\u00e9'));
const node: fc.Arbitrary<Node> = fc.letrec<{ n: Node }>((tie) => ({
  n: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(
      fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map((v) => ({ t: 'int' as const, v })),
      fc.integer({ min: -3, max: 3 }).map((v) => ({ t: 'int' as const, v: BigInt(v) })),
      floatText.map((text) => ({ t: 'float' as const, text })),
      strText.map((text) => ({ t: 'str' as const, text })),
      fc.constantFrom('true', 'false', 'null').map((text) => ({ t: 'lit' as const, text })),
    ),
    fc.array(tie('n'), { maxLength: 3 }).map((items) => ({ t: 'arr' as const, items })),
    fc.array(fc.tuple(key, tie('n')), { maxLength: 3 }).map((entries) => ({ t: 'obj' as const, entries })),
  ),
})).n;

function render(n: Node, sp: string): string {
  switch (n.t) {
    case 'int':
      return n.v.toString();
    case 'float':
    case 'str':
    case 'lit':
      return n.text;
    case 'arr':
      return `[${sp}${n.items.map((i) => render(i, sp)).join(`,${sp}`)}${sp}]`;
    case 'obj':
      return `{${sp}${n.entries.map(([k, v]) => `${JSON.stringify(k)}${sp}:${sp}${render(v, sp)}`).join(`,${sp}`)}${sp}}`;
  }
}

/** A host context: host keys around the known ones (typed when present), as JSON text. */
const contextText = fc
  .tuple(
    fc.array(fc.tuple(key, node), { maxLength: 4 }),
    fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    fc.option(fc.subarray(['metis', 'techne', 'aidos']), { nil: undefined }),
    fc.array(fc.tuple(key, node), { maxLength: 2 }),
    ws,
  )
  .map(([before, task, preceding, after, sp]) => {
    const known: [string, Node][] = [];
    if (task !== undefined) known.push(['task_type', { t: 'str', text: JSON.stringify(task) }]);
    if (preceding !== undefined)
      known.push([
        'preceding_agents',
        { t: 'arr', items: preceding.map((a) => ({ t: 'str' as const, text: JSON.stringify(a) })) },
      ]);
    const clean = (es: [string, Node][]) =>
      es.filter(([k]) => k !== 'task_type' && k !== 'transcript_hash' && k !== 'preceding_agents');
    return render({ t: 'obj', entries: [...clean(before), ...known, ...clean(after)] }, sp);
  });

const lineWith = (context: string): string =>
  `{"scene_id":"s.turn-1","agent":"metis","source":"specialist_proposed","context":${context},"narrative_beat":null,"agent_proposed":"plan","player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":true,"private_only":false}}`;

function entryOf(line: string): MemoirEntry {
  const p = parseLine(line);
  if (!p.ok) throw new Error(`${p.message}: ${line}`);
  return p.entry;
}

/** What kourai writes for the ten standard keys (closing brace included), through both encoders. */
function standard(e: MemoirEntry): string {
  const only = Object.fromEntries(STANDARD_KEYS.map((k) => [k, e[k]])) as MemoirEntry;
  const text = encodeEntry(only);
  const w = new LineWriter(1 << 12);
  expect(w.writeEntry(only)).toBe(true);
  expect(w.bytes().toString('utf8')).toBe(`${text}\n`);
  return text;
}

describe('context: any JSON object, every key kept and re-encoded as pydantic writes it', () => {
  it('random host contexts are read and re-encoded byte-identical to model_dump_json()', async (ctx) => {
    if (!havePydantic) ctx.skip(true, missing);
    const lines = fc.sample(contextText, { numRuns: 500, seed: 23 }).map(lineWith);
    const results = pydantic(lines);
    lines.forEach((line, i) => {
      const r = results[i] as { ok: boolean; dump?: string; error?: string };
      expect(r.error, line).toBeUndefined();
      const ours = standard(entryOf(line));
      expect(ours, line).toBe(r.dump);
      // what kourai wrote reads back to the same bytes (a copy of the entry keeps them too)
      const again = entryOf(ours);
      expect(standard({ ...again, context: again.context === null ? null : { ...again.context } })).toBe(ours);
    });
    await ctx.annotate(
      `pydantic ${probe.stdout.trim()}: ${lines.length} random contexts re-encoded byte-identical to model_dump_json()`,
      'proof',
    );
  });

  it('keys upstream gives a default may be left out (scene_id may be empty): read as pydantic reads them', async (ctx) => {
    if (!havePydantic) ctx.skip(true, missing);
    const full = {
      scene_id: '',
      agent: 'metis',
      source: 'specialist_proposed',
      context: { task_type: 'qa' },
      narrative_beat: 'b',
      agent_proposed: 'p',
      player_response: { kind: 'modified', delta: 'd', felt: 'right' },
      affinity_delta: 0.5,
      training_label: {
        preference_pair: [
          { text: 'p', score: 0 },
          { text: 'd', score: 1 },
        ],
        weight: 2.0,
      },
      split: { shared_eligible: true, private_only: false },
    } as Record<string, unknown>;
    const optional = [
      'context',
      'narrative_beat',
      'agent_proposed',
      'player_response',
      'affinity_delta',
      'training_label',
    ];
    const lines = fc.sample(
      fc
        .tuple(fc.subarray(optional), fc.subarray(['delta', 'felt']), fc.subarray(['preference_pair', 'weight']))
        .map(([drop, dropResponse, dropLabel]) => {
          const e: Record<string, unknown> = {
            ...full,
            player_response: { ...(full.player_response as object) },
            training_label: { ...(full.training_label as object) },
          };
          for (const k of drop) delete e[k];
          for (const k of dropResponse) delete (e.player_response as Record<string, unknown> | undefined)?.[k];
          for (const k of dropLabel) delete (e.training_label as Record<string, unknown> | undefined)?.[k];
          return JSON.stringify(e);
        }),
      { numRuns: 60, seed: 9 },
    );
    const results = pydantic(lines);
    lines.forEach((line, i) => expect(standard(entryOf(line)), line).toBe(results[i]?.dump));
  });

  it('the byte scanner takes only the context layout it knows, and falls back for any other', () => {
    fc.assert(
      fc.property(contextText, (context) => {
        const line = lineWith(context);
        const out = new ScannedLine();
        const buf = Buffer.from(line);
        if (scanLine(buf, 0, buf.length, out)) {
          const e = entryOf(line);
          expect(out.string('task_type')).toBe(e.context?.task_type ?? null);
          expect(Object.keys(e.context ?? {})).toEqual(['task_type', 'transcript_hash', 'preceding_agents']);
        }
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it('the known keys may be absent; extra keys stay in place, integer-like ones too', () => {
    const e = entryOf(lineWith('{"host":"py-host-1","7":1.0,"task_type":"qa","big":123456789012345678901234567890}'));
    expect(e.context?.task_type).toBe('qa');
    expect(e.context?.transcript_hash).toBeUndefined();
    expect(standard(e)).toContain(
      '"context":{"host":"py-host-1","7":1.0,"task_type":"qa","big":123456789012345678901234567890}',
    );
    // a copy with a key replaced re-encodes that key from its new value and keeps the others
    const changed = { ...e, context: { ...e.context, host: 'h2' } } as MemoirEntry;
    expect(standard(changed)).toContain(
      '"context":{"host":"h2","7":1.0,"task_type":"qa","big":123456789012345678901234567890}',
    );
  });

  it.each([['{"task_type":5}'], ['{"preceding_agents":["zeus"]}'], ['{"host":"h","transcript_hash":null}']])(
    'a known key of another type %s: an entry (pydantic takes any dict), kept in place but out of the typed view',
    (context) => {
      const e = entryOf(lineWith(context));
      expect(e.context?.task_type).toBeUndefined();
      expect(e.context?.preceding_agents).toBeUndefined();
      expect(e.context?.transcript_hash).toBeUndefined();
      expect(standard(e)).toContain(`"context":${context},`);
      // a copy keeps it; a copy that sets the key writes the new value in its place
      expect(standard({ ...e, context: { ...e.context } } as MemoirEntry)).toContain(`"context":${context},`);
      const set = { ...e, context: { ...e.context, task_type: 'qa' } } as MemoirEntry;
      if (context.includes('task_type')) expect(standard(set)).toContain('"context":{"task_type":"qa"},');
    },
  );

  it.each([
    ['"qa"', 'context must be a JSON object or null, not a string'],
    ['5', 'context must be a JSON object or null, not a number'],
    ['["qa"]', 'context must be a JSON object or null, not an array'],
  ])('a context %s is not an entry: %s', (context, message) => {
    const p = parseLine(lineWith(context));
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.message).toContain(message);
  });
});
