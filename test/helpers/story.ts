import type { MemoirEntry } from '../../src/memoir/format/schema.js';
import { MemoryStory } from '../replay/memory-story.js';

let n = 0;
/** A stored entry with defaults (ids are readable: E001, E002, …). */
export function entry(e: Partial<MemoirEntry> & Pick<MemoirEntry, 'scene_id' | 'agent'>): MemoirEntry {
  n += 1;
  return {
    source: 'specialist_proposed',
    context: null,
    narrative_beat: null,
    agent_proposed: null,
    player_response: null,
    affinity_delta: 0,
    training_label: null,
    split: { shared_eligible: true, private_only: false },
    entry_id: `E${String(n).padStart(3, '0')}`,
    recorded_at: `2026-10-01T09:${String(n % 60).padStart(2, '0')}:00.000Z`,
    entry_type: e.source === 'agent_interrupt' ? 'interrupt' : 'pipeline_turn',
    ...e,
  } as MemoirEntry;
}

export function resetIds(): void {
  n = 0;
}

/**
 * A small two-session story:
 *   s1.turn-0  hephaestus routes, metis proposes (+0.02), aidos interrupts metis (public)
 *   s1.turn-1  techne proposes (rejected, -0.05), puck interrupts techne (silent)
 *   s2.turn-0  metis proposes (+0.02), techne proposes (modified, +0.01, revision)
 *   s2.turn-1  cupid scene (+0.05)
 */
export function smallStory(): MemoryStory {
  resetIds();
  const s1 = [
    entry({
      scene_id: 's1.turn-0',
      agent: 'hephaestus',
      narrative_beat: 'hephaestus_routes_to_metis',
      agent_proposed: 'route:metis',
    }),
    entry({
      scene_id: 's1.turn-0',
      agent: 'metis',
      narrative_beat: 'metis_proposal_lands',
      agent_proposed: 'Plan: schema first',
      player_response: { kind: 'accepted', delta: null, felt: 'right' },
      affinity_delta: 0.02,
    }),
    entry({
      scene_id: 's1.turn-0',
      agent: 'aidos',
      source: 'agent_interrupt',
      narrative_beat: 'aidos_interrupts_metis',
      agent_proposed: 'That docstring restates the code.',
      interrupt: {
        interrupting_agent: 'aidos',
        target_agent: 'metis',
        target_turn: 'E002',
        reason_class: 'correction',
        visibility: 'public',
      },
    }),
    entry({
      scene_id: 's1.turn-1',
      agent: 'techne',
      narrative_beat: 'techne_proposal_refused',
      agent_proposed: 'x = compute()  # TODO naming',
      player_response: { kind: 'rejected', delta: null, felt: 'off' },
      affinity_delta: -0.05,
    }),
    entry({
      scene_id: 's1.turn-1',
      agent: 'puck',
      source: 'agent_interrupt',
      narrative_beat: 'puck_interrupts_techne',
      agent_proposed: 'Psst — Techne rewrote that three times.',
      split: { shared_eligible: false, private_only: true },
      interrupt: {
        interrupting_agent: 'puck',
        target_agent: 'techne',
        target_turn: 'E004',
        reason_class: 'gossip',
        visibility: 'silent',
      },
    }),
  ];
  const s2 = [
    entry({
      scene_id: 's2.turn-0',
      agent: 'metis',
      narrative_beat: 'metis_proposal_lands',
      agent_proposed: 'Split the work',
      player_response: { kind: 'accepted', delta: null, felt: 'right' },
      affinity_delta: 0.02,
    }),
    entry({
      scene_id: 's2.turn-0',
      agent: 'techne',
      narrative_beat: 'techne_proposal_reworked',
      agent_proposed: 'tmp2 = 3',
      player_response: { kind: 'modified', delta: 'entry_count = 3', felt: 'unsure' },
      affinity_delta: 0.01,
      likert: 3,
      comment: 'better names please',
    }),
    entry({
      scene_id: 's2.turn-1',
      agent: 'cupid',
      source: 'cupid_scene',
      narrative_beat: 'cupid_late_night_check_in',
      agent_proposed: 'It is late.',
      affinity_delta: 0.05,
      split: { shared_eligible: false, private_only: true },
    }),
  ];
  return new MemoryStory([
    { session: 'session-one', entries: s1 },
    { session: 'session-two', entries: s2 },
  ]);
}
