import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AGENTS, type Agent } from '../../../src/memoir/format/agents.js';
import { ENTRY_TYPES, SOURCES, VISIBILITIES, type EntryType, type Source } from '../../../src/memoir/format/sources.js';
import { councilFields } from '../../../src/memoir/derive/council-fields.js';
import { decideSplit, strictSplit } from '../../../src/memoir/format/split-rule.js';

/**
 * The verdict for every (source, agent) pair, decided by people, written out by hand.
 * Columns in this order: hephaestus metis techne dokimasia kallos mneme aidos aletheia cupid puck.
 * S = may leave the forge (when the line says shared), P = never.
 * A new source or agent has no row/column here and fails the test until someone decides.
 */
const COLUMNS = [
  'hephaestus',
  'metis',
  'techne',
  'dokimasia',
  'kallos',
  'mneme',
  'aidos',
  'aletheia',
  'cupid',
  'puck',
] as const;
const VERDICTS: Record<string, string> = {
  specialist_proposed: 'SSSSSSSSPP',
  agent_interrupt: 'SSSSSSSSPP',
  disagreement_resolution: 'SSSSSSSSPP',
  player_revision: 'PPPPPPPPPP',
  cupid_scene: 'PPPPPPPPPP',
  puck_engagement: 'PPPPPPPPPP',
  affinity_change: 'PPPPPPPPPP',
  player_profile: 'PPPPPPPPPP',
  raw_transcript: 'PPPPPPPPPP',
  task_description: 'PPPPPPPPPP',
};

/** Entry types: only turns and interrupts may carry craft out of the forge. */
const TYPE_VERDICTS: Record<string, 'S' | 'P'> = {
  pipeline_turn: 'S',
  interrupt: 'S',
  council_event: 'P',
  loyalty_beat: 'P',
  episode: 'P',
};

const shared = { shared_eligible: true, private_only: false };
const priv = { shared_eligible: false, private_only: true };

describe('the strict split rule', () => {
  it('has a decided verdict for every agent and every source', () => {
    expect([...COLUMNS].sort()).toEqual([...AGENTS].sort());
    expect(Object.keys(VERDICTS).sort()).toEqual([...SOURCES].sort());
    expect(Object.keys(TYPE_VERDICTS).sort()).toEqual([...ENTRY_TYPES].sort());
  });

  for (const source of SOURCES) {
    for (const agent of AGENTS) {
      const expected = VERDICTS[source]?.[COLUMNS.indexOf(agent as (typeof COLUMNS)[number])];
      it(`${source} × ${agent} -> ${expected === 'S' ? 'shareable' : 'private'}`, () => {
        expect(expected).toMatch(/^[SP]$/);
        expect(decideSplit({ agent, source, entry_type: 'pipeline_turn', split: shared }).shareable).toBe(
          expected === 'S',
        );
        // a line marked private stays private whatever the table says
        expect(decideSplit({ agent, source, entry_type: 'pipeline_turn', split: priv }).shareable).toBe(false);
      });
    }
  }

  for (const type of ENTRY_TYPES) {
    it(`entry type ${type} -> ${TYPE_VERDICTS[type] === 'S' ? 'may be shared' : 'private'}`, () => {
      expect(
        decideSplit({ agent: 'techne', source: 'specialist_proposed', entry_type: type, split: shared }).shareable,
      ).toBe(TYPE_VERDICTS[type] === 'S');
    });
  }

  it('keeps interrupts involving Cupid or Puck, or made private, inside the forge', () => {
    const base = {
      agent: 'aidos' as Agent,
      source: 'agent_interrupt' as Source,
      entry_type: 'interrupt' as EntryType,
      split: shared,
    };
    const it_ = (interrupting_agent: Agent, target_agent: Agent, visibility: string) => ({
      interrupting_agent,
      target_agent,
      visibility,
    });
    expect(decideSplit({ ...base, interrupt: it_('aidos', 'techne', 'public') }).shareable).toBe(true);
    expect(decideSplit({ ...base, interrupt: it_('aidos', 'techne', 'silent') }).shareable).toBe(true);
    expect(decideSplit({ ...base, interrupt: it_('aidos', 'techne', 'private') }).reason).toBe('private_interrupt');
    expect(decideSplit({ ...base, interrupt: it_('cupid', 'techne', 'public') }).reason).toBe(
      'bond_only_interrupt_party',
    );
    expect(decideSplit({ ...base, interrupt: it_('aidos', 'puck', 'public') }).reason).toBe(
      'bond_only_interrupt_party',
    );
  });

  it('flags a line that claims more than policy allows as lenient, and a narrowing as legitimate', () => {
    expect(decideSplit({ agent: 'cupid', source: 'cupid_scene', split: shared })).toEqual({
      shareable: false,
      reason: 'bond_only_agent',
      lenient: true,
    });
    expect(decideSplit({ agent: 'kallos', source: 'agent_interrupt', split: priv })).toEqual({
      shareable: false,
      reason: 'marked_private',
      lenient: false,
    });
  });

  it('property: an explicit split only ever narrows; strictSplit never widens and keeps the invariant', () => {
    const arb = fc.record({
      agent: fc.constantFrom(...AGENTS),
      source: fc.constantFrom(...SOURCES),
      entry_type: fc.constantFrom(...ENTRY_TYPES),
      interrupt: fc.option(
        fc.record({
          interrupting_agent: fc.constantFrom(...AGENTS),
          target_agent: fc.constantFrom(...AGENTS),
          visibility: fc.constantFrom(...VISIBILITIES),
        }),
        { nil: undefined },
      ),
      split: fc.constantFrom(shared, priv, { shared_eligible: false, private_only: false }),
    });
    fc.assert(
      fc.property(arb, (e) => {
        const withLine = decideSplit(e);
        const policyOnly = decideSplit({ ...e, split: shared });
        if (withLine.shareable) expect(policyOnly.shareable).toBe(true);
        if (!e.split.shared_eligible || e.split.private_only) expect(withLine.shareable).toBe(false);
        const s = strictSplit(e);
        expect(s.shared_eligible && s.private_only).toBe(false);
        expect(s.shared_eligible).toBe(withLine.shareable);
      }),
    );
  });
});

describe('the split rule and the council field rule agree', () => {
  const ids = { entry_id: 'E1', recorded_at: '2026-10-01T09:00:00.000Z' };
  const proposal = {
    ...ids,
    scene_id: 's',
    agent: 'techne' as const,
    source: 'specialist_proposed' as const,
    context: { task_type: 'code', transcript_hash: 'sha256:00', preceding_agents: [] },
    narrative_beat: 'techne_proposal_reworked',
    agent_proposed: 'function f(x) {}',
    player_response: { kind: 'modified' as const, delta: 'function f(x: number): void {}', felt: 'unsure' as const },
    affinity_delta: 0.02,
    training_label: {
      preference_pair: [
        { text: 'function f(x) {}', score: 0 },
        { text: 'function f(x: number): void {}', score: 1 },
      ],
      weight: 1,
    },
    split: { shared_eligible: true, private_only: false },
  };

  it('a shareable proposal the player revised: the split rule lets it leave, the field rule keeps the revision in', () => {
    expect(decideSplit(proposal).shareable).toBe(true);
    const f = councilFields(proposal);
    expect(f).toMatchObject({
      agent_text: 'function f(x) {}',
      outcome: { kind: 'modified', felt: 'unsure' },
      agent_pair: null,
      task_type: 'code',
      weight: 1,
    });
    expect(JSON.stringify(f)).not.toContain('x: number');
  });

  it('property: the field rule yields fields exactly for the entries the split rule marks shareable', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...AGENTS),
        fc.constantFrom(...SOURCES),
        fc.constantFrom(...ENTRY_TYPES),
        fc.boolean(),
        (agent, source, type, shared) => {
          const entry_type: EntryType =
            source === 'agent_interrupt' ? 'interrupt' : type === 'interrupt' ? 'pipeline_turn' : type;
          const e = {
            ...proposal,
            agent,
            source,
            entry_type,
            split: { shared_eligible: shared, private_only: !shared },
          };
          expect(councilFields(e) !== null).toBe(decideSplit(e).shareable);
        },
      ),
    );
  });
});
