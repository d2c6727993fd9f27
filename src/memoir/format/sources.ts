/**
 * Where an entry comes from (upstream `source`), one per row of the design's split table.
 * Whether a source may ever leave the forge is decided in split-rule.ts, not here.
 */
export const SOURCES = [
  'specialist_proposed',
  'player_revision',
  'agent_interrupt',
  'disagreement_resolution',
  'cupid_scene',
  'puck_engagement',
  'affinity_change',
  'player_profile',
  'raw_transcript',
  'task_description',
] as const;
export type Source = (typeof SOURCES)[number];

export const ENTRY_TYPES = ['pipeline_turn', 'interrupt', 'council_event', 'loyalty_beat', 'episode'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export const RESPONSE_KINDS = ['accepted', 'modified', 'rejected', 'deferred'] as const;
export type ResponseKind = (typeof RESPONSE_KINDS)[number];

export const FELT = ['right', 'off', 'unsure'] as const;
export type Felt = (typeof FELT)[number];

export const REASON_CLASSES = ['gossip', 'correction', 'disagreement', 'safety', 'care'] as const;
export type ReasonClass = (typeof REASON_CLASSES)[number];

export const VISIBILITIES = ['public', 'private', 'silent'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
