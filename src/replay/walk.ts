import { roundAffinity } from '../affinity/affinity.js';
import type { Agent } from '../memoir/format/agents.js';
import type { AffinityTotals, Beat, SessionInfo, StoryFilter, StoryNav } from './story.js';

/**
 * The story as a stream of events, for the non-interactive replay (text or NDJSON): it steps the
 * cursor beat by beat, so memory stays flat however long the memoir is.
 */
export type StoryEvent =
  | { type: 'session'; session: SessionInfo }
  | { type: 'scene'; scene_id: string; session: string }
  | { type: 'beat'; beat: Beat; affinity_after: number }
  | { type: 'session_end'; session: SessionInfo; affinity: AffinityTotals };

export function* walkStory(nav: StoryNav, filter: StoryFilter, signal?: AbortSignal): Generator<StoryEvent> {
  const totals = new Map<Agent, number>();
  let ref = nav.edge('first', filter);
  let session: SessionInfo | undefined;
  let scene: string | undefined;
  const snapshot = (): AffinityTotals => {
    const out: AffinityTotals = {};
    for (const [a, v] of totals) out[a] = v;
    return out;
  };
  while (ref) {
    if (signal?.aborted) return;
    const beat = nav.beat(ref);
    if (!session || session.rank !== ref.session) {
      if (session) yield { type: 'session_end', session, affinity: snapshot() };
      session = nav.sessions[ref.session] as SessionInfo;
      scene = undefined;
      yield { type: 'session', session };
    }
    if (beat.scene_id !== scene) {
      scene = beat.scene_id;
      yield { type: 'scene', scene_id: scene, session: beat.session };
    }
    const after = roundAffinity((totals.get(beat.agent) ?? 0) + beat.affinity_delta);
    if (beat.affinity_delta !== 0) totals.set(beat.agent, after);
    yield { type: 'beat', beat, affinity_after: after };
    ref = nav.step(ref, 1, filter);
  }
  if (session) yield { type: 'session_end', session, affinity: snapshot() };
}
