import { describe, expect, it } from 'vitest';
import { buildRevision } from '../../../src/memoir/derive/supersede.js';
import { prepareBatch, prepareEntries } from '../../../src/memoir/file/append.js';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { ulidGenerator } from '../../../src/memoir/format/entry-id.js';
import { parseLine } from '../../../src/memoir/format/parse.js';
import { entryVerdict } from '../../../src/memoir/format/split-rule.js';
import { unreadOf } from '../../../src/memoir/format/unread.js';

/**
 * kourai's extension keys holding what kourai cannot read: the line is an entry (pydantic ignores
 * the key), read as if the key were absent, the value kept in its place, and the entry private.
 * The property test against pydantic is in lax.test.ts; these are the rules one at a time.
 */
const LINE =
  '{"scene_id":"s.turn-1","agent":"metis","source":"specialist_proposed","context":null,"narrative_beat":null,"agent_proposed":"plan","player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":true,"private_only":false}';
const line = (ext: string): string => `${LINE}${ext}}`;
const ids = () =>
  ulidGenerator(
    () => Date.parse('2026-11-22T10:00:00Z'),
    (n) => new Uint8Array(n),
  );
const now = () => new Date('2026-11-22T10:00:00Z');

function read(ext: string) {
  const p = parseLine(line(ext));
  if (!p.ok) throw new Error(p.message);
  return p;
}

describe('an extension value kourai cannot read', () => {
  it.each([
    ['"likert":9', 'likert', 'likert holds 9, not an integer from 1 to 5'],
    ['"likert":"3"', 'likert', 'likert holds "3", not an integer from 1 to 5'],
    ['"comment":5', 'comment', 'comment holds 5, not a string'],
    ['"recorded_at":"yesterday"', 'recorded_at', 'recorded_at holds "yesterday", not an ISO 8601 timestamp'],
    ['"entry_type":"Council_Event"', 'entry_type', 'entry_type holds "Council_Event", not one of pipeline_turn'],
    ['"supersedes":""', 'supersedes', 'supersedes holds "", not an entry id'],
    ['"council":[]', 'council', 'council holds [], not a JSON object'],
  ])('%s: an entry, read without it, the value kept in its place, the entry private', (ext, key) => {
    const p = read(`,${ext}`);
    expect((p.entry as Record<string, unknown>)[key]).toBeUndefined();
    expect([...(unreadOf(p.entry)?.keys() ?? [])]).toEqual([key]);
    expect(entryVerdict(p.entry)).toEqual({ shareable: false, reason: 'unread_extension', lenient: false });
    expect(encodeEntry(p.entry)).toBe(line(`,"entry_id":"${p.entry.entry_id}",${ext}`));
  });

  it('an unreadable entry_id: the id is derived from the line, as for a line without one', () => {
    const p = read(',"entry_id":""');
    expect(p.derived).toBe(true);
    expect(p.entry.entry_id).toMatch(/^py_/);
    expect(parseLine(line(',"entry_id":""')).ok && p.entry.entry_id).toBe(read(',"entry_id":""').entry.entry_id);
  });

  it('interrupt details on an entry whose type is not interrupt are not read; on an interrupt they are', () => {
    const details =
      '"interrupt":{"interrupting_agent":"cupid","target_agent":"metis","target_turn":"t","reason_class":"care","visibility":"private"}';
    const turn = read(`,"entry_type":"pipeline_turn",${details}`);
    expect(turn.entry.interrupt).toBeUndefined();
    expect(unreadOf(turn.entry)?.get('interrupt')?.why).toMatch(/entry of type pipeline_turn/);
    const interrupt = read(`,"entry_type":"interrupt",${details}`);
    expect(interrupt.entry.interrupt?.interrupting_agent).toBe('cupid');
    expect(unreadOf(interrupt.entry)).toBeUndefined();
  });

  it('a readable line keeps its fast path: nothing set aside', () => {
    expect(unreadOf(read(',"likert":4,"comment":"ok"').entry)).toBeUndefined();
  });

  it('append: an unreadable type is replaced by the derived one and still makes the entry private', () => {
    const value = {
      scene_id: 's',
      agent: 'metis',
      source: 'specialist_proposed',
      agent_proposed: 'plan',
      entry_type: 'Council_Event',
    };
    const batch = prepareBatch([{ value, where: 'item 1' }], ids(), now);
    const e = batch.entries[0];
    expect(e?.entry_type).toBe('pipeline_turn');
    expect(e?.split).toEqual({ shared_eligible: false, private_only: true });
    expect(unreadOf(e as object)).toBeUndefined(); // replaced, not kept
    expect(batch.unread).toEqual([
      `item 1: entry_type holds "Council_Event", not one of pipeline_turn, interrupt, council_event, loyalty_beat, episode: kourai writes its own entry_type instead; the entry is private`,
    ]);
  });

  it('append: any other unreadable value is written as given, in its place; both encoders agree', () => {
    const value = { scene_id: 's', agent: 'metis', source: 'specialist_proposed', likert: 9, council: [] };
    const batch = prepareBatch([{ value: structuredClone(value), where: 'item 1' }], ids(), now);
    const [one] = prepareEntries([{ value: structuredClone(value), where: 'item 1' }], ids(), now);
    expect(batch.bytes.toString('utf8')).toBe(`${one?.line}\n`);
    expect(one?.line).toMatch(/"entry_type":"pipeline_turn","likert":9,"council":\[\]\}$/);
    expect(one?.entry.split).toEqual({ shared_eligible: false, private_only: true });
  });

  it('supersede: the revision keeps the unread values the correction does not set, not the revision’s own keys', () => {
    const original = read(',"entry_id":"","recorded_at":"yesterday","likert":9,"comment":5').entry;
    const built = buildRevision({
      original,
      originalShareable: entryVerdict(original).shareable,
      patch: { comment: 'fixed' },
      reason: 'typo',
    });
    expect([...(built.unread?.keys() ?? [])]).toEqual(['likert']);
    expect(built.input.split).toEqual({ shared_eligible: false, private_only: true });
  });
});
