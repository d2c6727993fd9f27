import { computeAffinity } from '../../affinity/affinity.js';
import { FEDERATING_AGENTS, type Agent } from '../format/agents.js';
import { councilDetailsOf } from './council-event.js';
import type { MemoirEntry } from '../format/schema.js';

/**
 * Player metrics from real memoirs (the design's second table), per player and over players:
 *
 * - affinity gain per session: the sum of `affinity_delta` in a session's memoir, averaged over the
 *   player's sessions, split into sessions played before the forge's first federation round came
 *   home and from then on (federated), and over players that federate vs players that never did;
 * - Sovereignty Moment branching: per federating agent, the share of players whose last round let
 *   her speak (she spoke, or was silent for a reason other than consent) vs kept her silent
 *   (`no_consent`), from the `council_event` entries the federation round writes;
 * - Council of Sisters attendance: rounds whose scene the player engaged with, stepped through or
 *   skipped — recorded only when the host writes it (`council.attendance`); otherwise counted as
 *   not recorded, never guessed;
 * - bonded-state achievement: the share of (player, agent) relationships that reached `bonded`;
 * - the Stoa Falls: exile events each player's forge witnessed, and whether it was their own.
 */
export interface SessionInput {
  player: string;
  /** Entries of one session's memoir, in file order. */
  entries: readonly MemoirEntry[];
}

export interface PlayerMetrics {
  player: string;
  sessions: number;
  federated: boolean;
  affinity_gain_per_session: { all: number | null; before_federation: number | null; federated: number | null };
  /** Per agent: did the player's latest round let her speak (null: no round yet). */
  consent: Partial<Record<Agent, boolean>>;
  council_rounds: number;
  attendance: { engaged: number; stepped_through: number; skipped: number; not_recorded: number };
  bonded: Agent[];
  stoa_falls: { round: number; forge: string; you: boolean }[];
}

export interface PlayerSummary {
  players: PlayerMetrics[];
  affinity_gain_per_session: {
    federated_players: number | null;
    other_players: number | null;
    federated_sessions: number | null;
    sessions_before_federation: number | null;
  };
  sovereignty: { agent: Agent; allowed: number; denied: number }[];
  attendance: PlayerMetrics['attendance'];
  bonded_rate: number | null;
  bonded_by_agent: { agent: Agent; players: number }[];
  stoa_falls: { events: number; own_exiles: number; players_witnessing: number };
}

const mean = (xs: readonly number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const ATTENDANCE = ['engaged', 'stepped_through', 'skipped'] as const;

export function playerMetrics(player: string, sessions: readonly SessionInput[]): PlayerMetrics {
  const gains: { gain: number; federated: boolean }[] = [];
  let federatedYet = false;
  const consent: PlayerMetrics['consent'] = {};
  const attendance = { engaged: 0, stepped_through: 0, skipped: 0, not_recorded: 0 };
  const stoa: PlayerMetrics['stoa_falls'] = [];
  let rounds = 0;
  const changes: Parameters<typeof computeAffinity>[0] extends Iterable<infer C> ? C[] : never = [];
  // Sessions in the order they were played (their first timestamp; undated ones keep file order).
  const ordered = [...sessions].sort((a, b) =>
    (a.entries[0]?.recorded_at ?? '').localeCompare(b.entries[0]?.recorded_at ?? ''),
  );
  for (const s of ordered) {
    let gain = 0;
    const federatedAtStart = federatedYet;
    for (const e of s.entries) {
      if (!Number.isFinite(e.affinity_delta)) continue; // NaN or ±Infinity (pydantic reads them) change no affinity
      gain += e.affinity_delta;
      if (e.affinity_delta !== 0)
        changes.push({
          agent: e.agent,
          delta: e.affinity_delta,
          entry_id: e.entry_id,
          scene_id: e.scene_id,
          recorded_at: e.recorded_at ?? null,
        });
      const d = councilDetailsOf(e as MemoirEntry & { council?: unknown });
      if (!d) continue;
      if (d.beat === 'stoa_falls') {
        for (const x of d.exiles) stoa.push({ round: x.round, forge: x.forge, you: x.you });
        continue;
      }
      rounds++;
      federatedYet = true;
      for (const sp of d.spoke) consent[sp.agent] = true;
      for (const si of d.silent)
        if ((FEDERATING_AGENTS as readonly string[]).includes(si.agent))
          consent[si.agent as Agent] = si.reason !== 'no_consent';
      const att = (e as { council?: { attendance?: unknown } }).council?.attendance;
      if (typeof att === 'string' && (ATTENDANCE as readonly string[]).includes(att))
        attendance[att as (typeof ATTENDANCE)[number]]++;
      else attendance.not_recorded++;
    }
    gains.push({ gain, federated: federatedAtStart });
  }
  const bonded = computeAffinity(changes)
    .filter((a) => a.tier === 'bonded')
    .map((a) => a.agent);
  return {
    player,
    sessions: sessions.length,
    federated: rounds > 0,
    affinity_gain_per_session: {
      all: mean(gains.map((g) => g.gain)),
      before_federation: mean(gains.filter((g) => !g.federated).map((g) => g.gain)),
      federated: mean(gains.filter((g) => g.federated).map((g) => g.gain)),
    },
    consent,
    council_rounds: rounds,
    attendance,
    bonded,
    stoa_falls: stoa,
  };
}

export function summarizePlayers(players: readonly PlayerMetrics[], relationships: readonly Agent[]): PlayerSummary {
  const attendance = { engaged: 0, stepped_through: 0, skipped: 0, not_recorded: 0 };
  for (const p of players)
    for (const k of Object.keys(attendance) as (keyof typeof attendance)[]) attendance[k] += p.attendance[k];
  const fed = players.filter((p) => p.federated);
  const other = players.filter((p) => !p.federated);
  const gain = (ps: readonly PlayerMetrics[], pick: (p: PlayerMetrics) => number | null): number | null =>
    mean(ps.map(pick).filter((v): v is number => v !== null));
  return {
    players: [...players],
    affinity_gain_per_session: {
      federated_players: gain(fed, (p) => p.affinity_gain_per_session.all),
      other_players: gain(other, (p) => p.affinity_gain_per_session.all),
      federated_sessions: gain(players, (p) => p.affinity_gain_per_session.federated),
      sessions_before_federation: gain(players, (p) => p.affinity_gain_per_session.before_federation),
    },
    sovereignty: FEDERATING_AGENTS.map((agent) => ({
      agent,
      allowed: players.filter((p) => p.consent[agent] === true).length,
      denied: players.filter((p) => p.consent[agent] === false).length,
    })),
    attendance,
    bonded_rate: players.length
      ? players.reduce((s, p) => s + p.bonded.length, 0) / (players.length * relationships.length)
      : null,
    bonded_by_agent: relationships.map((agent) => ({
      agent,
      players: players.filter((p) => p.bonded.includes(agent)).length,
    })),
    stoa_falls: {
      events: players.reduce((s, p) => s + p.stoa_falls.length, 0),
      own_exiles: players.reduce((s, p) => s + p.stoa_falls.filter((x) => x.you).length, 0),
      players_witnessing: players.filter((p) => p.stoa_falls.length > 0).length,
    },
  };
}
