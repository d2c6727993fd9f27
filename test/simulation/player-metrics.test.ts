import { afterAll, describe, expect, it } from 'vitest';
import players from '../../src/commands/memoir/players.js';
import { parseOptions } from '../../src/run-command.js';
import {
  councilEventEntry,
  COUNCIL_EVENT_FORMAT,
  type CouncilEventDetails,
} from '../../src/memoir/derive/council-event.js';
import { memoirPathFor } from '../../src/memoir/file/discover.js';
import { Memoir } from '../../src/memoir/file/memoir.js';
import { testCtx } from '../helpers/ctx.js';

function details(round: number, o: Partial<CouncilEventDetails> = {}): CouncilEventDetails {
  return {
    format: COUNCIL_EVENT_FORMAT,
    beat: 'council_of_sisters',
    council: 'c1',
    forge: 'athens',
    round,
    round_key: `c1/${round}`,
    forges: null,
    spoke: [
      { agent: 'techne', epsilon_cost: 0.4, epsilon_after: 0.4, receipt_digest: 'd', used: true, resumed: false },
    ],
    silent: [
      { agent: 'metis', reason: 'no_consent', detail: 'the player keeps her silent' },
      { agent: 'mneme', reason: 'too_little_data', detail: '3 examples' },
    ],
    came_back: [],
    learned: [],
    trust: { before: 1, after: 1, exiled: false, exiled_round: null },
    exiles: [],
    ledger_head: { releases: round, hash: 'h' },
    ...o,
  };
}

describe('kourai memoir players', () => {
  const ctx = testCtx();
  afterAll(() => ctx.cleanup());

  it('reads each player’s sessions: affinity gain before and after federating, consent, attendance, bonded, the Stoa Falls', async () => {
    const at = (d: string): string => `2026-10-0${d}T10:00:00.000Z`;
    const base = {
      context: null,
      narrative_beat: null,
      agent_proposed: null,
      player_response: null,
      training_label: null,
    };
    // ariadne: session 1 before federating (+0.3 techne), session 2 with a round and an exile (+0.5 techne → bonded at 0.8)
    const s1 = new Memoir(memoirPathFor(ctx.home, 'ariadne', 'p', 's1'));
    s1.append([
      {
        ...base,
        scene_id: 'session-s1.turn-0',
        agent: 'techne',
        source: 'affinity_change',
        affinity_delta: 0.3,
        recorded_at: at('1'),
      },
    ]);
    const s2 = new Memoir(memoirPathFor(ctx.home, 'ariadne', 'p', 's2'));
    s2.append([
      { ...councilEventEntry(details(1)), recorded_at: at('2') },
      {
        ...base,
        scene_id: 'session-s2.turn-0',
        agent: 'techne',
        source: 'affinity_change',
        affinity_delta: 0.5,
        recorded_at: at('3'),
      },
      {
        ...councilEventEntry(details(2, { beat: 'stoa_falls', exiles: [{ forge: 'sparta', round: 2, you: false }] })),
        recorded_at: at('4'),
      },
    ]);
    // icarus: never federated, one session of +0.1
    new Memoir(memoirPathFor(ctx.home, 'icarus', 'p', 's1')).append([
      {
        ...base,
        scene_id: 'session-x.turn-0',
        agent: 'kallos',
        source: 'affinity_change',
        affinity_delta: 0.1,
        recorded_at: at('1'),
      },
    ]);

    const r = await players.run(parseOptions(players, { json: true }), ctx);
    expect(r.players.map((p) => p.player)).toEqual(['ariadne', 'icarus']);
    const [a, i] = r.players;
    expect(a).toMatchObject({
      sessions: 2,
      federated: true,
      council_rounds: 1,
      bonded: ['techne'],
      consent: { techne: true, metis: false, mneme: true },
    });
    expect(a?.affinity_gain_per_session.before_federation).toBeCloseTo(0.4, 12); // both sessions started before any round came home
    expect(a?.affinity_gain_per_session.federated).toBeNull(); // the round came home during session 2: it started unfederated
    expect(a?.attendance).toEqual({ engaged: 0, stepped_through: 0, skipped: 0, not_recorded: 1 });
    expect(a?.stoa_falls).toEqual([{ round: 2, forge: 'sparta', you: false }]);
    expect(i).toMatchObject({ federated: false, bonded: [], council_rounds: 0 });
    expect(r.affinity_gain_per_session.federated_players).toBeCloseTo(0.4, 12);
    expect(r.affinity_gain_per_session.other_players).toBeCloseTo(0.1, 12);
    expect(r.sovereignty.find((s) => s.agent === 'metis')).toEqual({ agent: 'metis', allowed: 0, denied: 1 });
    expect(r.bonded_rate).toBeCloseTo(1 / 20, 12);
    expect(r.stoa_falls).toEqual({ events: 1, own_exiles: 0, players_witnessing: 1 });

    const only = await players.run(parseOptions(players, { player: ['icarus'] }), ctx);
    expect(only.players.map((p) => p.player)).toEqual(['icarus']);
    await expect(players.run(parseOptions(players, { player: ['nobody'] }), ctx)).rejects.toMatchObject({
      exitCode: 6,
    });
  });
});
