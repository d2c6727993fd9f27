import { kouraiHome, type Ctx } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { AGENTS } from '../../memoir/format/agents.js';
import { describeLocation, resolveMemoirs } from '../../memoir/file/discover.js';
import {
  playerMetrics,
  summarizePlayers,
  type PlayerSummary,
  type SessionInput,
} from '../../memoir/derive/player-metrics.js';
import { readRecords } from '../../memoir/file/reader.js';
import type { MemoirEntry } from '../../memoir/format/schema.js';
import { defineCommand } from '../types.js';
import { optionsSchema } from '../spec-schema.js';
import { players as spec } from './commands.js';

const options = optionsSchema(spec, {});

/** `kourai memoir players`: the player metrics of real forges (src/memoir/derive/player-metrics.ts). */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<PlayerSummary> {
    const paths = resolveMemoirs(opts.memoir, kouraiHome(ctx), ctx.cwd);
    const byPlayer = new Map<string, SessionInput[]>();
    for (const path of paths) {
      const player = describeLocation(path).player ?? 'unknown';
      if (opts.player.length && !opts.player.includes(player)) continue;
      const entries: MemoirEntry[] = [];
      for (const r of readRecords(path)) if (r.kind === 'entry') entries.push(r.entry);
      byPlayer.set(player, [...(byPlayer.get(player) ?? []), { player, entries }]);
    }
    if (byPlayer.size === 0)
      throw new NotFoundError(
        opts.player.length ? `no memoir of ${opts.player.join(', ')} under the memoirs searched` : 'no memoirs found',
        'write the sample forge with `kourai memoir synth`, or pass --memoir PATH',
      );
    const players = [...byPlayer].sort(([a], [b]) => a.localeCompare(b)).map(([p, s]) => playerMetrics(p, s));
    return summarizePlayers(players, AGENTS);
  },
  render(r) {
    const f = (v: number | null): string => (v === null ? '—' : v.toFixed(3));
    const out = [`${r.players.length} player${r.players.length === 1 ? '' : 's'}`, ''];
    out.push('affinity gain per session');
    out.push(
      `  federating players ${f(r.affinity_gain_per_session.federated_players)}   others ${f(r.affinity_gain_per_session.other_players)}`,
    );
    out.push(
      `  sessions after the first round ${f(r.affinity_gain_per_session.federated_sessions)}   before ${f(r.affinity_gain_per_session.sessions_before_federation)}`,
    );
    out.push('', 'Sovereignty Moment (latest round): players letting each agent speak / keeping her silent');
    for (const s of r.sovereignty) out.push(`  ${s.agent.padEnd(11)} ${String(s.allowed).padStart(4)} / ${s.denied}`);
    const a = r.attendance;
    out.push(
      '',
      `Council of Sisters attendance: engaged ${a.engaged}, stepped through ${a.stepped_through}, skipped ${a.skipped}, not recorded ${a.not_recorded}`,
    );
    out.push(
      `bonded relationships: ${r.bonded_rate === null ? '—' : `${(r.bonded_rate * 100).toFixed(1)}%`} (${
        r.bonded_by_agent
          .filter((b) => b.players > 0)
          .map((b) => `${b.agent} ${b.players}`)
          .join(', ') || 'none'
      })`,
    );
    out.push(
      `the Stoa Falls: ${r.stoa_falls.events} event${r.stoa_falls.events === 1 ? '' : 's'} seen by ${r.stoa_falls.players_witnessing} player${r.stoa_falls.players_witnessing === 1 ? '' : 's'}, ${r.stoa_falls.own_exiles} of their own forge`,
    );
    out.push('', 'per player');
    for (const p of r.players)
      out.push(
        `  ${p.player.padEnd(14)} sessions ${p.sessions}  gain/session ${f(p.affinity_gain_per_session.all)}  rounds ${p.council_rounds}  bonded ${p.bonded.join(', ') || '—'}  stoa falls ${p.stoa_falls.length}`,
      );
    return out.join('\n');
  },
});
