import { afterEach, describe, expect, it } from 'vitest';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import type { Example } from '../../../src/train/examples/types.js';
import { bondView, councilView } from '../../../src/train/examples/views.js';
import { ent, indexed, type Indexed } from './helpers.js';

const open: Indexed[] = [];
function source(...memoirs: MemoirEntry[][]): Indexed {
  const s = indexed(...memoirs);
  open.push(s);
  return s;
}
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

const ctx = (task_type: string) => ({ task_type, transcript_hash: 'sha256:00', preceding_agents: [] });
const accepted = { kind: 'accepted', delta: null, felt: 'right' } as const;
const rejected = { kind: 'rejected', delta: null, felt: 'off' } as const;
const texts = (xs: readonly Example[]): string => JSON.stringify(xs);
const of = <K extends Example['kind']>(xs: readonly Example[], kind: K) =>
  xs.filter((x): x is Extract<Example, { kind: K }> => x.kind === kind);

/** One scene of each kind of labelled entry. */
function story(): MemoirEntry[] {
  return [
    // s-test: the player's task, a misroute the player overrode, the route, two test proposals
    ent({
      scene_id: 's-test',
      agent: 'hephaestus',
      source: 'task_description',
      context: ctx('test'),
      agent_proposed: 'write tests for the kabo parser',
    }),
    ent({
      scene_id: 's-test',
      agent: 'hephaestus',
      context: ctx('test'),
      agent_proposed: 'route:techne',
      player_response: rejected,
    }),
    ent({ scene_id: 's-test', agent: 'hephaestus', context: ctx('test'), agent_proposed: 'route:dokimasia' }),
    ent({
      scene_id: 's-test',
      agent: 'dokimasia',
      context: ctx('test'),
      agent_proposed: "it('keeps order', () => {})",
      player_response: accepted,
    }),
    ent({
      scene_id: 's-test',
      agent: 'dokimasia',
      context: ctx('test'),
      agent_proposed: "it.only('x', () => {})",
      player_response: rejected,
      training_label: { preference_pair: null, weight: 0.5 },
    }),
    // s-code: a reworked proposal (pair + binary), the player's revision entry (same pair), a rating, a deferral
    ent({
      scene_id: 's-code',
      agent: 'techne',
      context: ctx('code'),
      agent_proposed: 'function f(x) { return x }',
      player_response: { kind: 'modified', delta: 'PLAYER-REVISED f(x: number): number', felt: 'unsure' },
      training_label: {
        preference_pair: [
          { text: 'function f(x) { return x }', score: 0 },
          { text: 'PLAYER-REVISED f(x: number): number', score: 1 },
        ],
        weight: 1,
      },
      split: { shared_eligible: true, private_only: false },
    }),
    ent({
      scene_id: 's-code',
      agent: 'techne',
      source: 'player_revision',
      context: ctx('code'),
      agent_proposed: 'PLAYER-REVISED f(x: number): number',
      player_response: { kind: 'modified', delta: 'PLAYER-REVISED f(x: number): number', felt: 'unsure' },
      training_label: {
        preference_pair: [
          { text: 'function f(x) { return x }', score: 0 },
          { text: 'PLAYER-REVISED f(x: number): number', score: 1 },
        ],
        weight: 2,
      },
    }),
    ent({
      scene_id: 's-code',
      agent: 'techne',
      context: ctx('code'),
      agent_proposed: 'const g = 1;',
      player_response: { kind: 'accepted', delta: null, felt: 'right' },
      likert: 4,
    }),
    ent({
      scene_id: 's-code',
      agent: 'techne',
      context: ctx('code'),
      agent_proposed: 'const h = 2;',
      player_response: { kind: 'deferred', delta: null, felt: null },
    }),
    ent({
      scene_id: 's-code',
      agent: 'techne',
      context: ctx('code'),
      agent_proposed: 'const z = 0;',
      player_response: accepted,
      training_label: { preference_pair: null, weight: 0 },
    }),
    // s-review: Aidos's slop call (taken), Aletheia's correction (dismissed), an unanswered interrupt, a disagreement
    ent({
      scene_id: 's-review',
      agent: 'aidos',
      source: 'agent_interrupt',
      agent_proposed: 'That comment restates the code.',
      player_response: accepted,
      interrupt: {
        interrupting_agent: 'aidos',
        target_agent: 'techne',
        target_turn: 's-code',
        reason_class: 'correction',
        visibility: 'public',
      },
    }),
    ent({
      scene_id: 's-review',
      agent: 'aletheia',
      source: 'agent_interrupt',
      agent_proposed: 'I am not sure that is right.',
      player_response: rejected,
      interrupt: {
        interrupting_agent: 'aletheia',
        target_agent: 'techne',
        target_turn: 's-code',
        reason_class: 'correction',
        visibility: 'public',
      },
    }),
    ent({
      scene_id: 's-review',
      agent: 'kallos',
      source: 'agent_interrupt',
      agent_proposed: 'I would not rename that.',
      interrupt: {
        interrupting_agent: 'kallos',
        target_agent: 'techne',
        target_turn: 's-code',
        reason_class: 'disagreement',
        visibility: 'public',
      },
    }),
    ent({
      scene_id: 's-review',
      agent: 'aidos',
      source: 'disagreement_resolution',
      context: ctx('style_review'),
      agent_proposed: 'Aidos: cut it',
      player_response: accepted,
      training_label: {
        preference_pair: [
          { text: 'Kallos: keep it', score: 0 },
          { text: 'Aidos: cut it', score: 1 },
        ],
        weight: 1,
      },
    }),
    // s-bond: Cupid and Puck
    ent({
      scene_id: 's-bond',
      agent: 'cupid',
      source: 'cupid_scene',
      context: null,
      narrative_beat: 'cupid_late_night_check_in',
      agent_proposed: 'It is late.',
      affinity_delta: 0.05,
    }),
    ent({
      scene_id: 's-bond',
      agent: 'puck',
      source: 'puck_engagement',
      context: null,
      narrative_beat: 'puck_riddle',
      player_response: accepted,
      affinity_delta: 0.02,
    }),
    ent({
      scene_id: 's-bond',
      agent: 'puck',
      source: 'puck_engagement',
      context: null,
      narrative_beat: 'puck_race',
      player_response: { kind: 'deferred', delta: null, felt: null },
    }),
  ];
}

describe('bondView: the example kinds of every agent (LEARNING-DESIGN.md §1)', () => {
  it('Hephaestus: a route example per routing decision the player did not override; text = the task description alone', () => {
    const v = bondView(source(story()), 'hephaestus');
    expect(v.examples).toEqual([
      {
        kind: 'route',
        agent: 'hephaestus',
        entryId: expect.any(String),
        scene: 's-test',
        weight: 1,
        taskType: 'test',
        text: 'write tests for the kabo parser',
        description: 'write tests for the kabo parser',
        label: 'dokimasia',
      },
    ]);
    expect(v.skipped).toEqual({ route_intervened: 1, unlabelled_source: 1 }); // the task description teaches through the route
  });

  it('Dokimasia: binary proposal outcomes, weighted by training_label.weight', () => {
    const v = bondView(source(story()), 'dokimasia');
    expect(v.examples.map((e) => (e.kind === 'binary' ? [e.label, e.weight] : null))).toEqual([
      [1, 1],
      [0, 0.5],
    ]);
  });

  it('Techne: the pair counts once (the larger weight) and no outcome row repeats its label; a rating is graded (r-1)/4; deferred and zero-weight are skipped', () => {
    const v = bondView(source(story()), 'techne');
    const pairs = of(v.examples, 'pair');
    expect(pairs).toHaveLength(1);
    expect(pairs[0]).toMatchObject({
      chosen: 'PLAYER-REVISED f(x: number): number',
      rejected: 'function f(x) { return x }',
      chosenBy: 'revision',
      weight: 2,
    });
    // The revised proposal is the pair's rejected side: a label-0 binary row for it would count it twice.
    expect(of(v.examples, 'binary')).toEqual([]);
    expect(of(v.examples, 'graded')).toEqual([expect.objectContaining({ text: 'const g = 1;', target: 0.75 })]);
    expect(v.skipped).toMatchObject({ duplicate_pair: 1, deferred: 1, zero_weight: 1 });
  });

  it('Aidos and Aletheia: was the call taken; a disagreement is a pair of two agents’ positions (a choice, not a revision)', () => {
    const s = source(story());
    const aidos = bondView(s, 'aidos');
    expect(of(aidos.examples, 'binary')).toEqual([
      expect.objectContaining({ text: 'That comment restates the code.', label: 1 }),
    ]);
    expect(of(aidos.examples, 'pair')).toEqual([
      expect.objectContaining({ chosen: 'Aidos: cut it', rejected: 'Kallos: keep it', chosenBy: 'choice' }),
    ]);
    expect(of(bondView(s, 'aletheia').examples, 'binary')).toEqual([expect.objectContaining({ label: 0 })]);
    expect(bondView(s, 'kallos')).toMatchObject({ examples: [], skipped: { no_label: 1 } });
  });

  it('Cupid and Puck: graded scene acceptance, else affinity gain', () => {
    const s = source(story());
    expect(bondView(s, 'cupid').examples).toEqual([
      expect.objectContaining({ kind: 'graded', text: 'cupid_late_night_check_in\nIt is late.', target: 0.75 }),
    ]);
    expect(bondView(s, 'puck').examples.map((e) => (e.kind === 'graded' ? e.target : null))).toEqual([1, 0.5]);
  });
});

describe('bondView: newest revisions only, and the replay buffer', () => {
  it('a superseded line never trains; its newest revision does', () => {
    const original = ent({
      scene_id: 's1',
      agent: 'techne',
      agent_proposed: 'OLD proposal text',
      player_response: accepted,
    });
    const fix = ent({
      scene_id: 's1',
      agent: 'techne',
      agent_proposed: 'NEW proposal text',
      player_response: accepted,
      supersedes: original.entry_id,
      revision_reason: 'typo',
    });
    const v = bondView(source([original, fix]), 'techne');
    expect(texts(v.examples)).not.toContain('OLD proposal text');
    expect(v.examples).toEqual([expect.objectContaining({ text: 'NEW proposal text', entryId: fix.entry_id })]);
    expect(v.skipped.superseded).toBe(1);
  });

  it('keeps every load-bearing entry and fills the rest of the bound with the most informative', () => {
    const routine = Array.from({ length: 200 }, (_, i) =>
      ent({ scene_id: `r${i}`, agent: 'techne', agent_proposed: `routine ${i}`, player_response: accepted }),
    );
    const lessons = Array.from({ length: 10 }, (_, i) =>
      ent({ scene_id: `l${i}`, agent: 'techne', agent_proposed: `lesson ${i}`, player_response: rejected }),
    );
    const s = source([...routine.slice(0, 100), ...lessons, ...routine.slice(100)]);
    const v = bondView(s, 'techne', { bound: 20 });
    expect(v.examples).toHaveLength(20);
    expect(of(v.examples, 'binary').filter((e) => e.label === 0)).toHaveLength(10);
    // Among equals, the newest routine entries fill the room.
    expect(
      of(v.examples, 'binary')
        .filter((e) => e.label === 1)
        .map((e) => e.text),
    ).toEqual(routine.slice(190).map((e) => e.agent_proposed));
    expect(v.skipped.below_bound).toBe(190);
    const tight = bondView(s, 'techne', { bound: 5 });
    expect(tight.examples.map((e) => (e.kind === 'binary' ? e.text : ''))).toEqual(
      lessons.map((e) => e.agent_proposed),
    );
    // strictBound (train bond): the bound holds for load-bearing entries too; the newest lessons stay
    const strict = bondView(s, 'techne', { bound: 5, strictBound: true });
    expect(strict.examples.map((e) => (e.kind === 'binary' ? e.text : ''))).toEqual(
      lessons.slice(5).map((e) => e.agent_proposed),
    );
    expect(strict.skipped).toMatchObject({ load_bearing_over_bound: 5, below_bound: 200 });
  });

  it('rejects a bound that is not a whole number', () => {
    expect(() => bondView(source(story()), 'techne', { bound: -1 })).toThrow(/bound must be a whole number/);
  });

  it('stops with exit 130 when cancelled', () => {
    const many = Array.from({ length: 5000 }, (_, i) =>
      ent({ scene_id: `r${i}`, agent: 'techne', agent_proposed: `x${i}`, player_response: accepted }),
    );
    const ac = new AbortController();
    ac.abort();
    expect(() => bondView(source(many), 'techne', { signal: ac.signal })).toThrow(
      expect.objectContaining({ exitCode: 130 }),
    );
  });
});

describe('councilView: shareable entries, council fields only', () => {
  it('never sees a private entry or the player’s revision; keeps the outcome of the proposal', () => {
    const v = councilView(source(story()), 'techne');
    const all = texts(v.examples);
    expect(all).not.toContain('PLAYER-REVISED');
    expect(of(v.examples, 'pair')).toEqual([]);
    expect(of(v.examples, 'binary')).toEqual([
      expect.objectContaining({ text: 'function f(x) { return x }', label: 0 }),
    ]);
    expect(v.skipped.private).toBe(1); // the player_revision entry
  });

  it('Hephaestus: the council routes on the task type alone (the description is the player’s words)', () => {
    const v = councilView(source(story()), 'hephaestus');
    expect(v.examples).toEqual([
      expect.objectContaining({ kind: 'route', text: 'task type: test', description: null, label: 'dokimasia' }),
    ]);
    expect(all(v)).not.toContain('kabo parser');
  });

  it('a choice between two agent candidates is a council pair; a pair with a side no shareable agent entry wrote is not', () => {
    const cand = 'export function a(x: number): number {}';
    const other = 'export function a(x) {}';
    const s = source([
      ent({ scene_id: 'c1', agent: 'techne', agent_proposed: other, player_response: rejected }),
      ent({
        scene_id: 'c1',
        agent: 'techne',
        agent_proposed: cand,
        player_response: accepted,
        training_label: {
          preference_pair: [
            { text: other, score: 0 },
            { text: cand, score: 1 },
          ],
          weight: 1,
        },
      }),
      ent({
        scene_id: 'c2',
        agent: 'techne',
        agent_proposed: cand,
        player_response: accepted,
        training_label: {
          preference_pair: [
            { text: 'SOMEONE-ELSE wrote this', score: 0 },
            { text: cand, score: 1 },
          ],
          weight: 1,
        },
      }),
      ent({
        scene_id: 'c3',
        agent: 'cupid',
        source: 'cupid_scene',
        agent_proposed: 'PRIVATE cupid text',
        context: null,
      }),
      ent({
        scene_id: 'c3',
        agent: 'techne',
        agent_proposed: cand,
        player_response: accepted,
        training_label: {
          preference_pair: [
            { text: 'PRIVATE cupid text', score: 0 },
            { text: cand, score: 1 },
          ],
          weight: 1,
        },
      }),
    ]);
    const v = councilView(s, 'techne');
    expect(of(v.examples, 'pair')).toEqual([
      expect.objectContaining({ scene: 'c1', chosen: cand, rejected: other, chosenBy: 'choice' }),
    ]);
    expect(texts(v.examples)).not.toMatch(/SOMEONE-ELSE|PRIVATE/);
    expect(of(bondView(s, 'techne').examples, 'pair')).toHaveLength(3);
  });

  it('a disagreement is a council pair (two agents’ positions)', () => {
    expect(of(councilView(source(story()), 'aidos').examples, 'pair')).toEqual([
      expect.objectContaining({ chosen: 'Aidos: cut it', rejected: 'Kallos: keep it' }),
    ]);
  });

  it('a correction (memoir supersede) that changes the text keeps the text out of the council; one that changes only the outcome does not', () => {
    const a = ent({
      scene_id: 'r1',
      agent: 'metis',
      context: ctx('plan'),
      agent_proposed: 'Plan: a then b',
      player_response: accepted,
    });
    const a2 = ent({
      scene_id: 'r1',
      agent: 'metis',
      context: ctx('plan'),
      agent_proposed: 'PLAYER-CORRECTED plan',
      player_response: accepted,
      supersedes: a.entry_id,
    });
    const b = ent({
      scene_id: 'r2',
      agent: 'metis',
      context: ctx('plan'),
      agent_proposed: 'Plan: c then d',
      player_response: accepted,
    });
    const b2 = ent({
      scene_id: 'r2',
      agent: 'metis',
      context: ctx('plan'),
      agent_proposed: 'Plan: c then d',
      player_response: rejected,
      supersedes: b.entry_id,
    });
    const s = source([a, b, a2, b2]);
    const v = councilView(s, 'metis');
    expect(texts(v.examples)).not.toContain('PLAYER-CORRECTED');
    expect(texts(v.examples)).not.toContain('Plan: a then b'); // superseded
    expect(v.examples).toEqual([expect.objectContaining({ kind: 'binary', text: 'Plan: c then d', label: 0 })]);
    expect(texts(bondView(s, 'metis').examples)).toContain('PLAYER-CORRECTED');
  });

  it('a revision of a private entry stays private, even when its line claims shared', () => {
    const p = ent({
      scene_id: 'p1',
      agent: 'techne',
      agent_proposed: 'PRIVATE original',
      player_response: accepted,
      split: { shared_eligible: false, private_only: true },
    });
    const p2 = ent({
      scene_id: 'p1',
      agent: 'techne',
      agent_proposed: 'PRIVATE original',
      player_response: rejected,
      supersedes: p.entry_id,
      split: { shared_eligible: true, private_only: false },
    });
    // The revision is in an earlier file than its original: only the chain knows.
    const v = councilView(source([p2], [p]), 'techne');
    expect(v.examples).toEqual([]);
    expect(v.skipped.private).toBe(2);
  });

  it('Cupid and Puck have no council view', () => {
    expect(() => councilView(source(story()), 'cupid')).toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringMatching(/cupid is bond-only/) }),
    );
  });
});

function all(v: { examples: readonly Example[] }): string {
  return texts(v.examples);
}
