import type { StoryEvent } from './walk.js';

/**
 * The NDJSON form of the replay (`kourai memoir replay --json`), one record per event:
 *   {"type":"session","session","memoir","player","project","started_at"}
 *   {"type":"scene","session","scene_id"}
 *   {"type":"beat","session","memoir_line","scene_id","entry_id","recorded_at","agent","source",
 *    "entry_type","narrative_beat","proposed","response":{kind,felt,delta}|null,"affinity_delta",
 *    "affinity_after","interrupt":{by,target,target_turn,reason,visibility,shown_to_player}|null,
 *    "likert","comment","supersedes","shared"}
 *   {"type":"session_end","session","affinity":{agent: total}}
 * `affinity_after` is the agent's affinity after the beat, counted from the first session shown.
 */
export function storyRecord(ev: StoryEvent): Record<string, unknown> {
  switch (ev.type) {
    case 'session':
      return {
        type: 'session',
        session: ev.session.session,
        memoir: ev.session.path,
        player: ev.session.player,
        project: ev.session.project,
        started_at: ev.session.startedAt,
      };
    case 'scene':
      return { type: 'scene', session: ev.session, scene_id: ev.scene_id };
    case 'beat': {
      const { ref, session, ...rest } = ev.beat;
      return { type: 'beat', session, memoir_line: ref.line, ...rest, affinity_after: ev.affinity_after };
    }
    case 'session_end':
      return { type: 'session_end', session: ev.session.session, affinity: ev.affinity };
  }
}
