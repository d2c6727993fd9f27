import type { Agent } from '../memoir/format/agents.js';
import type { Context, MemoirInput } from '../memoir/format/schema.js';
import type { Felt, ResponseKind } from '../memoir/format/sources.js';

/**
 * The feedback entry: what one answered Likert prompt writes to the memoir.
 *
 * Rating (1–5, "how right did it feel?") maps to:
 *   rating  label          felt     affinity_delta
 *   1       way off        off      -0.05
 *   2       a bit off      off      -0.05
 *   3       unsure         unsure    0
 *   4       right          right    +0.02
 *   5       exactly right  right    +0.02
 * The raw rating is kept in the `likert` extension, the optional comment in `comment`.
 * With a revision, `player_response.delta` is the revised text and `training_label` is the
 * preference pair [proposed (score 0), revised (score 1)] with weight 1.0; without one, the
 * delta and the training label are null.
 *
 * Split: the strict rule decides (a federating specialist's proposal is shareable at pattern
 * level), but an entry carrying the player's own words (a revision or a comment) is written
 * private: "patterns leave the forge; instances do not".
 */
export const RATINGS = [1, 2, 3, 4, 5] as const;
/** Longest comment accepted (characters). */
export const MAX_COMMENT = 2000;
/** Largest proposal or revision accepted (bytes of UTF-8). */
export const MAX_TEXT_BYTES = 1024 * 1024;
export type Rating = (typeof RATINGS)[number];

export const RATING_LABEL: Readonly<Record<Rating, string>> = {
  1: 'way off',
  2: 'a bit off',
  3: 'unsure',
  4: 'right',
  5: 'exactly right',
};

export function isRating(n: unknown): n is Rating {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 5;
}

export function feltFor(rating: Rating): Felt {
  return rating <= 2 ? 'off' : rating === 3 ? 'unsure' : 'right';
}

export function affinityFor(rating: Rating): number {
  return rating <= 2 ? -0.05 : rating === 3 ? 0 : 0.02;
}

export const KIND_HELP: Readonly<Record<ResponseKind, string>> = {
  accepted: 'used as proposed',
  modified: 'used, after changing it',
  rejected: 'not used',
  deferred: 'decided later',
};

const BEAT_WORD: Readonly<Record<ResponseKind, string>> = {
  accepted: 'lands',
  modified: 'reworked',
  rejected: 'refused',
  deferred: 'deferred',
};

/** The response kind a rating suggests (the prompt pre-selects it; the player confirms). */
export function suggestedKind(rating: Rating, revised: boolean): ResponseKind {
  if (revised) return 'modified';
  return rating >= 4 ? 'accepted' : rating <= 2 ? 'rejected' : 'deferred';
}

export interface FeedbackSubject {
  agent: Agent;
  scene_id: string;
  proposed: string;
  revised: string | null;
  /** The scene's context (task type, transcript hash), copied from the agent's entry when there is one. */
  context: Context | null;
}

export interface FeedbackAnswer {
  rating: Rating;
  kind: ResponseKind;
  comment: string | null;
}

export function feedbackEntry(subject: FeedbackSubject, answer: FeedbackAnswer): MemoirInput {
  const comment = answer.comment !== null && answer.comment.trim() !== '' ? answer.comment : null;
  const playerWords = subject.revised !== null || comment !== null;
  return {
    scene_id: subject.scene_id,
    agent: subject.agent,
    source: 'specialist_proposed',
    context: subject.context,
    narrative_beat: `${subject.agent}_proposal_${BEAT_WORD[answer.kind]}`,
    agent_proposed: subject.proposed,
    player_response: { kind: answer.kind, delta: subject.revised, felt: feltFor(answer.rating) },
    affinity_delta: affinityFor(answer.rating),
    training_label:
      subject.revised !== null
        ? {
            preference_pair: [
              { text: subject.proposed, score: 0 },
              { text: subject.revised, score: 1 },
            ],
            weight: 1,
          }
        : null,
    ...(playerWords ? { split: { shared_eligible: false, private_only: true } } : {}),
    entry_type: 'pipeline_turn',
    likert: answer.rating,
    ...(comment !== null ? { comment } : {}),
  };
}
