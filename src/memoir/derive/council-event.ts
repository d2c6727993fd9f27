/**
 * The memoir's record of a federation round: one private `council_event` entry per round (and one
 * per exile the forge learns of), written by `kourai federate round`. Its details live under the
 * `council` extension key; the Council of Sisters and the Stoa Falls scenes, `memoir replay` and
 * the ledger's rollback check all read them from here.
 *
 * Private by construction (entry type council_event is instance data): what the forge chose and
 * what came back stay on the forge.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { FEDERATING_AGENTS } from '../format/agents.js';
import { readRecords } from '../file/reader.js';
import type { MemoirEntry, MemoirInput } from '../format/schema.js';

export const COUNCIL_EVENT_FORMAT = 'kourai.council-event/1';

/** The scene a council_event plays: the Council of Sisters (a round came home) or the Stoa Falls (an exile). */
export const COUNCIL_BEATS = ['council_of_sisters', 'stoa_falls'] as const;
export type CouncilBeat = (typeof COUNCIL_BEATS)[number];

const federating = z.enum(FEDERATING_AGENTS);

/** What one agent's adapter did on held-out probes: her preference before the round, after it, and in her own proposal. */
export const ProbeSchema = z.object({
  /** A planted preference id (or `routing` for Hephaestus). */
  preference: z.string(),
  /**
   * `accuracy`: the share of n fresh pairs ranked toward the preference (routing: of routes
   * sent right), 0.5 = no preference. `margin` (older rounds): the mean score margin.
   */
  measure: z.enum(['accuracy', 'margin']).default('margin'),
  n: z.number().int().nullable().default(null),
  /** With the council adapter before the round. */
  before: z.number(),
  /** The same with the council adapter that came back. */
  after: z.number(),
  /** The same with the adapter she trained and proposed this round (null: she did not speak). */
  mine: z.number().nullable(),
  /** The same with what this player applied before the round (their bond, and the council as far as it was applied); null: nothing to measure. */
  yours: z.number().nullable().default(null),
});

/** What a council adapter does for this player, measured on their held-out scenes when it came home. */
export const ValidationSchema = z.object({
  /** The bond version measured with (null: the player had no bond for this agent). */
  bond_version: z.number().int().nullable(),
  scenes: z.number().int(),
  examples: z.number().int(),
  /** Accuracy of what was applied before the round (null: nothing was). */
  before: z.number().nullable(),
  bond_only: z.number(),
  council_only: z.number(),
  both: z.number(),
  /** The lean now applied when no lean is set (0 bond only … 1 council only), and its accuracy. */
  lean: z.number(),
  after: z.number(),
  passed: z.boolean(),
});

export const CouncilEventDetailsSchema = z.object({
  format: z.literal(COUNCIL_EVENT_FORMAT),
  beat: z.enum(COUNCIL_BEATS),
  /** The council's key (src/federation/round/round-key.ts) and this forge's name there. */
  council: z.string(),
  forge: z.string(),
  round: z.number().int(),
  round_key: z.string(),
  /** How many forges sent updates this round (null: not recorded). */
  forges: z.number().int().nullable().default(null),
  spoke: z.array(
    z.object({
      agent: federating,
      epsilon_cost: z.number(),
      epsilon_after: z.number(),
      /** The council's receipt digest of what was accepted. */
      receipt_digest: z.string(),
      /** Whether the council used her update (null: unknown, e.g. the agent was not aggregated). */
      used: z.boolean().nullable(),
      /** True when the update was drawn in an earlier, interrupted run of this round. */
      resumed: z.boolean(),
    }),
  ),
  silent: z.array(z.object({ agent: z.string(), reason: z.string(), detail: z.string() })),
  came_back: z.array(
    z.object({
      agent: federating,
      /** Whether the round produced a new council adapter for her. */
      aggregated: z.boolean(),
      strategy: z.string(),
      updates: z.number().int(),
      used: z.number().int(),
      skipped_reason: z.string().nullable(),
      /** The council adapter version stored on the forge (null: nothing new). */
      version: z.number().int().nullable(),
      /** ‖new − previous‖ of the adapter's factors (null: nothing new). */
      update_norm: z.number().nullable().default(null),
      /**
       * The norm the privacy noise alone gives the aggregate, estimated as σ·S·√(d/k) (k updates
       * averaged, every forge at this forge's σ and S): when it is near update_norm, what came
       * back is mostly noise — the federation needs more forges or less noise to carry a signal.
       */
      noise_norm: z.number().nullable().default(null),
      /** Measured on this player's held-out scenes (null: not measured). */
      validation: ValidationSchema.nullable().default(null),
    }),
  ),
  /** Per agent that came home with a new adapter: what moved on held-out probes. */
  learned: z.array(z.object({ agent: federating, probes: z.array(ProbeSchema) })),
  trust: z.object({
    before: z.number().nullable(),
    after: z.number(),
    exiled: z.boolean(),
    exiled_round: z.number().int().nullable(),
  }),
  /** Forges the council exiled after this round (this forge is `you: true`). */
  exiles: z.array(z.object({ forge: z.string(), round: z.number().int(), you: z.boolean() })),
  /** The privacy ledger's head after the round: a later rollback of the ledger is noticed here. */
  ledger_head: z.object({ releases: z.number().int().min(0), hash: z.string() }),
});
export type CouncilEventDetails = z.output<typeof CouncilEventDetailsSchema>;

export interface CouncilEvent {
  entryId: string;
  recordedAt: string | null;
  sceneId: string;
  details: CouncilEventDetails;
}

/** The scene id of a round's entries: every council_event of one round shares it. */
export function councilSceneId(councilKey: string, round: number): string {
  return `council-${councilKey}-r${round}`;
}

/** One line per round, readable without the scene (the entry's `agent_proposed`). */
export function summarize(d: CouncilEventDetails): string {
  if (d.beat === 'stoa_falls') {
    const names = d.exiles.map((e) => (e.you ? 'this forge' : `the forge ${e.forge}`));
    return `The Stoa falls after round ${d.round}: ${names.join(' and ')} ${names.length === 1 ? 'is' : 'are'} exiled from the council.`;
  }
  const spoke = d.spoke.map((s) => s.agent);
  const back = d.came_back.filter((c) => c.aggregated).map((c) => c.agent);
  return [
    `Council of Sisters, round ${d.round}:`,
    spoke.length ? `${spoke.join(', ')} spoke;` : 'nobody spoke;',
    d.silent.length
      ? `${d.silent.map((s) => `${s.agent} (${s.reason.replace(/_/g, ' ')})`).join(', ')} stayed silent;`
      : '',
    back.length
      ? `${back.length} council adapter${back.length === 1 ? '' : 's'} came home (${back.join(', ')}).`
      : 'no council adapter changed.',
  ]
    .filter(Boolean)
    .join(' ');
}

/** The memoir entry for a round's details: private, Hephaestus convenes the council. */
export function councilEventEntry(d: CouncilEventDetails): MemoirInput {
  const parsed = CouncilEventDetailsSchema.parse(d);
  return {
    scene_id: councilSceneId(parsed.council, parsed.round),
    agent: 'hephaestus',
    source: 'player_profile',
    entry_type: 'council_event',
    narrative_beat: parsed.beat,
    agent_proposed: summarize(parsed),
    split: { shared_eligible: false, private_only: true },
    council: parsed,
  };
}

/** The details of an entry, or null when it is not a council_event written by a round. */
export function councilDetailsOf(
  e: Pick<MemoirEntry, 'entry_type'> & { council?: unknown },
): CouncilEventDetails | null {
  if (e.entry_type !== 'council_event' || e.council === undefined) return null;
  const parsed = CouncilEventDetailsSchema.safeParse(e.council);
  return parsed.success ? parsed.data : null;
}

/** Every round's council_event in a memoir, in file order (a missing file has none). */
export function readCouncilEvents(path: string): CouncilEvent[] {
  if (!existsSync(path)) return [];
  const out: CouncilEvent[] = [];
  for (const r of readRecords(path)) {
    if (r.kind !== 'entry') continue;
    const d = councilDetailsOf(r.entry);
    if (d)
      out.push({
        entryId: r.entry.entry_id,
        recordedAt: r.entry.recorded_at ?? null,
        sceneId: r.entry.scene_id,
        details: d,
      });
  }
  return out;
}

const LedgerHeadSchema = z.object({
  ledger_head: z.object({ releases: z.number().int().min(0), hash: z.string() }),
  round: z.number().int().optional(),
});

/**
 * Every ledger head recorded by council_event entries, read leniently (only `ledger_head`), so
 * that an entry whose other details a newer kourai wrote still anchors the ledger.
 */
export function readLedgerHeads(
  path: string,
): { entryId: string; round: number | null; releases: number; hash: string }[] {
  if (!existsSync(path)) return [];
  const out: { entryId: string; round: number | null; releases: number; hash: string }[] = [];
  for (const r of readRecords(path)) {
    if (r.kind !== 'entry' || r.entry.entry_type !== 'council_event') continue;
    const h = LedgerHeadSchema.safeParse((r.entry as { council?: unknown }).council);
    if (h.success) out.push({ entryId: r.entry.entry_id, round: h.data.round ?? null, ...h.data.ledger_head });
  }
  return out;
}
