import { AffinityAccumulator } from '../affinity/affinity.js';
import { requiredCooldown, type FeedbackHistory, type GatingPolicy } from '../affinity/gating.js';
import type { Agent } from '../memoir/format/agents.js';
import { loadEntryAt } from '../memoir/file/reader.js';
import type { SkipRecord } from '../store/feedback-prompts.js';
import type { StoryIndex } from '../memoir-index/story-queries.js';

/**
 * What the gate needs to know about an agent, read from the index: its affinity (every change in
 * the scope) and how many of its entries came after its last feedback (an entry with a `likert`
 * rating) or after the player's last skip. The walk goes newest first and stops as soon as the
 * answer is known, so it reads at most `cooldown` lines from disk. A rating newer than the last
 * skip (written by any host) ends the back-off, as an answer here does.
 */
export function feedbackHistory(
  q: StoryIndex,
  agent: Agent,
  policy: GatingPolicy,
  skip: SkipRecord | undefined,
): FeedbackHistory & { newestEntryId: string | null } {
  const acc = new AffinityAccumulator();
  for (const c of q.affinityChanges([agent])) {
    acc.add({
      agent: c.agent,
      delta: c.affinity_delta,
      entry_id: c.entry_id,
      scene_id: c.scene_id,
      recorded_at: c.recorded_at,
    });
  }
  let skips = skip?.count ?? 0;
  const required = requiredCooldown(policy, skips);
  let n = 0;
  let newest: string | null = null;
  let since: FeedbackHistory['since'] = null;
  let stopped = false;
  for (const row of q.agentRowsNewestFirst(agent)) {
    newest ??= row.entry_id;
    if (skip?.anchor && row.entry_id === skip.anchor) {
      since = 'skip';
      stopped = true;
      break;
    }
    const session = q.sessions[row.session];
    if (session) {
      const e = loadEntryAt(session.path, row.offset, row.length, row.entry_id);
      if (typeof e.likert === 'number') {
        since = 'feedback';
        stopped = true;
        skips = 0;
        break;
      }
    }
    n++;
    if (n >= required) {
      // Enough entries to pass the cooldown, whatever lies further back.
      stopped = true;
      since = skip ? 'skip' : null;
      break;
    }
  }
  // Never rated and never skipped: the cooldown does not apply.
  const entriesSince = !stopped && !skip ? null : n;
  if (!stopped && skip) since = 'skip';
  return { affinity: acc.total(agent), entriesSince, since, skips, newestEntryId: newest };
}
