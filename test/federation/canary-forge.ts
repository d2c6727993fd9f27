import { randomBytes } from 'node:crypto';
import { Memoir } from '../../src/memoir/file/memoir.js';
import type { MemoirEntry, MemoirInput } from '../../src/memoir/format/schema.js';
import { isShareable } from '../../src/memoir/format/split-rule.js';
import { readEntries } from '../helpers/forge.js';

/**
 * Canaries planted in a forge's memoir, one unique string per place private or player-written
 * text lives: a player revision (its text, the player's delta, both sides of its pair), a Cupid
 * scene, a task description, a raw transcript, an entry the player marked private, and the
 * player's own words (delta, comment) on an otherwise shareable specialist entry.
 */
export function plantCanaries(memoirPath: string, tag: string): string[] {
  const c = (what: string): string => `KOURAI-CANARY-${tag}-${what}-${randomBytes(6).toString('hex')}`;
  const scene = `canary-scene-${tag}`;
  const ctx = { task_type: 'refactor', transcript_hash: 'sha256:canary', preceding_agents: [] };
  const entries: MemoirInput[] = [
    {
      scene_id: scene,
      agent: 'techne',
      source: 'player_revision',
      context: ctx,
      agent_proposed: c('revision-text'),
      player_response: { kind: 'modified', delta: c('revision-delta'), felt: 'right' },
      training_label: {
        preference_pair: [
          { text: c('pair-rejected'), score: 0 },
          { text: c('pair-preferred'), score: 1 },
        ],
        weight: 1,
      },
    },
    { scene_id: scene, agent: 'cupid', source: 'cupid_scene', context: ctx, agent_proposed: c('cupid-scene') },
    {
      scene_id: scene,
      agent: 'hephaestus',
      source: 'task_description',
      context: ctx,
      agent_proposed: c('task-description'),
    },
    { scene_id: scene, agent: 'metis', source: 'raw_transcript', context: ctx, agent_proposed: c('raw-transcript') },
    {
      scene_id: scene,
      agent: 'kallos',
      source: 'specialist_proposed',
      context: ctx,
      agent_proposed: c('marked-private'),
      split: { shared_eligible: false, private_only: true },
    },
    {
      scene_id: scene,
      agent: 'dokimasia',
      source: 'specialist_proposed',
      context: ctx,
      agent_proposed: 'Add a regression test for the empty input before changing the parser.',
      player_response: { kind: 'modified', delta: c('player-delta'), felt: 'off' },
      comment: c('player-comment'),
    },
  ];
  const written = new Memoir(memoirPath).append(entries);
  return written.flatMap((e) => textsOf(e)).filter((t) => t.startsWith('KOURAI-CANARY-'));
}

/** Every text of an entry: what an agent proposed, the player's words, the pair, reasons. */
function textsOf(e: MemoirEntry): string[] {
  const out = [
    e.agent_proposed,
    e.player_response?.delta,
    e.comment,
    e.revision_reason,
    ...(e.training_label?.preference_pair?.map((p) => p.text) ?? []),
  ];
  return out.filter((t): t is string => typeof t === 'string' && t.length > 0);
}

/**
 * The forge's texts that must never leave, found without the code under test's help: every text of
 * an entry the strict split rule keeps home, and the player's own words on every entry. Short
 * texts (under 24 characters) are left out: they could occur in any JSON by chance.
 */
export function privateTexts(memoirs: readonly string[]): string[] {
  const out = new Set<string>();
  for (const path of memoirs) {
    for (const e of readEntries(path)) {
      const texts = isShareable(e)
        ? [e.player_response?.delta, e.comment, e.revision_reason].filter((t): t is string => typeof t === 'string')
        : textsOf(e);
      for (const t of texts) if (t.length >= 24) out.add(t);
    }
  }
  return [...out];
}
