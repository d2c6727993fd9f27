import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AGENTS, FEDERATING_AGENTS, type Agent } from '../../../src/memoir/format/agents.js';
import { AGENT_AUTHORED_SOURCES, councilFields } from '../../../src/memoir/derive/council-fields.js';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import {
  ENTRY_TYPES,
  REASON_CLASSES,
  RESPONSE_KINDS,
  SOURCES,
  VISIBILITIES,
  type Source,
} from '../../../src/memoir/format/sources.js';
import { decideSplit, entryTypeOf, strictSplit } from '../../../src/memoir/format/split-rule.js';
import { bondView, councilView } from '../../../src/train/examples/views.js';
import { indexed } from './helpers.js';

/**
 * Privacy property: no private entry, and no text the player wrote, ever reaches a council
 * batch. Every private entry's texts and every player-written text (revisions, comments,
 * correction reasons, a pair side nobody can show an agent wrote, a supersede that changes the
 * text) are canary strings; agent-authored texts of shareable entries are not (agent_proposed
 * of a source agents speak in, the two positions of a disagreement). Whatever the memoir, no
 * canary appears in any council view.
 */

const CANARY = 'CANARY';

interface Spec {
  scene: number;
  agent: Agent;
  source: Source;
  entryType: (typeof ENTRY_TYPES)[number] | null;
  markPrivate: boolean;
  response: { kind: (typeof RESPONSE_KINDS)[number]; delta: boolean } | null;
  pair: 'none' | 'revision' | 'other-entry' | 'foreign' | 'positions';
  pairOther: number;
  likert: number | null;
  comment: boolean;
  interrupt: {
    by: Agent;
    target: Agent;
    visibility: (typeof VISIBILITIES)[number];
    reason: (typeof REASON_CLASSES)[number];
  } | null;
  weight: number | null;
  /** A correction of an earlier entry (index into the memoir so far). */
  revise: { of: number; changeText: boolean; claimShared: boolean } | null;
}

const agent = fc.constantFrom(...AGENTS);
const spec: fc.Arbitrary<Spec> = fc.record({
  scene: fc.integer({ min: 0, max: 3 }),
  agent,
  // Sources agents speak in come up more often, so shareable entries are common.
  source: fc.oneof(fc.constantFrom(...AGENT_AUTHORED_SOURCES), fc.constantFrom(...SOURCES)),
  entryType: fc.option(fc.constantFrom(...ENTRY_TYPES), { freq: 3 }),
  markPrivate: fc.boolean(),
  response: fc.option(fc.record({ kind: fc.constantFrom(...RESPONSE_KINDS), delta: fc.boolean() })),
  pair: fc.constantFrom('none', 'revision', 'other-entry', 'foreign', 'positions'),
  pairOther: fc.nat(40),
  likert: fc.option(fc.integer({ min: 1, max: 5 })),
  comment: fc.boolean(),
  interrupt: fc.option(
    fc.record({
      by: agent,
      target: agent,
      visibility: fc.constantFrom(...VISIBILITIES),
      reason: fc.constantFrom(...REASON_CLASSES),
    }),
  ),
  weight: fc.option(fc.constantFrom(0, 0.5, 1, 2)),
  revise: fc.option(fc.record({ of: fc.nat(40), changeText: fc.boolean(), claimShared: fc.boolean() }), { freq: 4 }),
});

/** Materialises specs as entries: canaries wherever the text is private or the player's. */
function memoir(specs: readonly Spec[]): MemoirEntry[] {
  const out: MemoirEntry[] = [];
  specs.forEach((s, i) => {
    const id = `P${String(i).padStart(4, '0')}`;
    const base = s.revise && out.length > 0 ? (out[s.revise.of % out.length] as MemoirEntry) : null;
    if (base && s.revise) {
      const canaryText = `${CANARY}-${i}-corrected`;
      const e: MemoirEntry = {
        ...base,
        entry_id: id,
        recorded_at: new Date(Date.UTC(2026, 9, 1) + i * 60_000).toISOString(),
        supersedes: base.entry_id,
        revision_reason: `${CANARY}-${i}-reason`,
        agent_proposed: s.revise.changeText ? canaryText : base.agent_proposed,
        player_response: s.response
          ? { kind: s.response.kind, delta: s.response.delta ? `${CANARY}-${i}-delta` : null, felt: null }
          : base.player_response,
        split: s.revise.claimShared
          ? { shared_eligible: true, private_only: false }
          : { shared_eligible: false, private_only: true },
      };
      if (s.revise.changeText && e.training_label?.preference_pair)
        e.training_label = {
          ...e.training_label,
          preference_pair: [
            { text: `${CANARY}-${i}-p0`, score: 0 },
            { text: canaryText, score: 1 },
          ],
        };
      out.push(e);
      return;
    }
    const scene = `scene-${s.scene}`;
    const entryType =
      s.source === 'agent_interrupt'
        ? 'interrupt'
        : s.entryType === 'interrupt'
          ? 'pipeline_turn'
          : (s.entryType ?? 'pipeline_turn');
    const interrupt =
      entryType === 'interrupt' && s.interrupt
        ? {
            interrupting_agent: s.interrupt.by,
            target_agent: s.interrupt.target,
            target_turn: scene,
            reason_class: s.interrupt.reason,
            visibility: s.interrupt.visibility,
          }
        : undefined;
    const draft = { agent: s.agent, source: s.source, entry_type: entryType, interrupt } as const;
    const split = s.markPrivate ? { shared_eligible: false, private_only: true } : strictSplit(draft);
    const isPrivate = !decideSplit({ ...draft, split }).shareable;
    // An agent's own words when the entry may leave; a canary when it may not.
    const own = isPrivate || !AGENT_AUTHORED_SOURCES.has(s.source) ? `${CANARY}-${i}-private` : `agent text ${i}`;
    const delta = s.response?.delta ? `${CANARY}-${i}-delta` : null;
    let pair: { text: string; score: number }[] | null = null;
    if (s.pair === 'revision')
      pair = [
        { text: own, score: 0 },
        { text: `${CANARY}-${i}-revised`, score: 1 },
      ];
    if (s.pair === 'foreign')
      pair = [
        { text: `${CANARY}-${i}-foreign`, score: 0 },
        { text: own, score: 1 },
      ];
    if (s.pair === 'other-entry' && out.length > 0)
      pair = [
        { text: (out[s.pairOther % out.length] as MemoirEntry).agent_proposed ?? `${CANARY}-${i}-none`, score: 0 },
        { text: own, score: 1 },
      ];
    // A disagreement's two sides are agents' positions: that is what the source means, and the
    // rule trusts it as it trusts agent_proposed to be the agent's.
    if (s.pair === 'positions' || (s.pair !== 'none' && s.source === 'disagreement_resolution')) {
      const side = (k: string): string =>
        isPrivate || s.source !== 'disagreement_resolution' ? `${CANARY}-${i}-${k}` : `position ${i} ${k}`;
      pair = [
        { text: side('lost'), score: 0 },
        { text: side('won'), score: 1 },
      ];
    }
    out.push({
      scene_id: scene,
      agent: s.agent,
      source: s.source,
      context: { task_type: 'code', transcript_hash: 'sha256:00', preceding_agents: [] },
      narrative_beat: `${CANARY}-${i}-beat`,
      agent_proposed: own,
      player_response: s.response ? { kind: s.response.kind, delta, felt: null } : null,
      affinity_delta: 0,
      training_label: pair || s.weight !== null ? { preference_pair: pair, weight: s.weight ?? 1 } : null,
      split,
      entry_id: id,
      recorded_at: new Date(Date.UTC(2026, 9, 1) + i * 60_000).toISOString(),
      entry_type: entryType,
      ...(interrupt ? { interrupt } : {}),
      ...(s.likert !== null ? { likert: s.likert } : {}),
      ...(s.comment ? { comment: `${CANARY}-${i}-comment` } : {}),
    } as MemoirEntry);
  });
  return out;
}

describe('council privacy (fast-check, canary strings)', () => {
  it('councilFields never carries a canary, given the chain a revision replaces', () => {
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 40 }), (specs) => {
        const entries = memoir(specs);
        const byId = new Map(entries.map((e) => [e.entry_id, e]));
        const sceneTexts = new Set(
          entries
            .filter(
              (e) =>
                decideSplit({ ...e, entry_type: entryTypeOf(e) }).shareable &&
                e.supersedes === undefined &&
                AGENT_AUTHORED_SOURCES.has(e.source),
            )
            .map((e) => e.agent_proposed),
        );
        for (const e of entries) {
          const ancestors: MemoirEntry[] = [];
          for (
            let a = e.supersedes ? byId.get(e.supersedes) : undefined;
            a;
            a = a.supersedes ? byId.get(a.supersedes) : undefined
          )
            ancestors.unshift(a);
          const f = councilFields(e, { ancestors, isAgentTextInScene: (t) => sceneTexts.has(t) });
          expect(JSON.stringify(f)).not.toContain(CANARY);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('no council view of any memoir holds a private entry or the player’s words (through the index)', () => {
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 30 }), fc.boolean(), (specs, twoFiles) => {
        const entries = memoir(specs);
        const half = Math.floor(entries.length / 2);
        // Two memoirs, the second first: a revision may be indexed before what it replaces.
        const s = twoFiles ? indexed(entries.slice(half), entries.slice(0, half)) : indexed(entries);
        try {
          for (const a of FEDERATING_AGENTS) {
            const v = councilView(s, a, { bound: 8 });
            expect(JSON.stringify(v.examples)).not.toContain(CANARY);
          }
        } finally {
          s.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('the canaries are there to find: the bond view of the same memoirs does see them', () => {
    const entries = memoir([
      {
        scene: 0,
        agent: 'techne',
        source: 'specialist_proposed',
        entryType: null,
        markPrivate: false,
        response: { kind: 'modified', delta: true },
        pair: 'revision',
        pairOther: 0,
        likert: null,
        comment: true,
        interrupt: null,
        weight: null,
        revise: null,
      },
    ]);
    const s = indexed(entries);
    try {
      expect(JSON.stringify(bondView(s, 'techne').examples)).toContain(`${CANARY}-0-revised`);
      const council = JSON.stringify(councilView(s, 'techne').examples);
      expect(council).not.toContain(CANARY);
      expect(council).toContain('agent text 0');
    } finally {
      s.close();
    }
  });
});
