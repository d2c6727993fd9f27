import type { Beat } from './story.js';

/**
 * Short human phrases for beats, shared by the screen and the text views.
 * `techne_proposal_lands` by techne reads "proposal lands"; `hephaestus_routes_to_metis`
 * reads "routes to metis"; without a narrative beat, the source does ("task description").
 */
export function beatTitle(b: Pick<Beat, 'agent' | 'narrative_beat' | 'source' | 'interrupt'>): string {
  if (b.interrupt) return `interrupts ${b.interrupt.target}`;
  if (b.narrative_beat) {
    const prefix = `${b.agent}_`;
    const raw = b.narrative_beat.startsWith(prefix) ? b.narrative_beat.slice(prefix.length) : b.narrative_beat;
    return raw.replace(/_/g, ' ');
  }
  return b.source.replace(/_/g, ' ');
}

/** What the player saw of an interrupt. */
export function visibilityNote(v: 'public' | 'private' | 'silent'): string {
  if (v === 'silent') return 'silent: not shown to the player';
  if (v === 'private') return 'private: shown to the player only';
  return 'public';
}
