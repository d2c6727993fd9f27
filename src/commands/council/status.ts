import { resolveCouncilConfig } from '../../council/config.js';
import { describeLocation } from '../../council/open-storage.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS, openExisting } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { status as spec } from './commands.js';

const options = optionsSchema(spec, {});

/** Processes silent for longer than this are listed as stale (they heartbeat every ≤ 5 s). */
const STALE_SECONDS = 15;

export interface StatusResult {
  backend: 'sqlite' | 'postgres';
  database: string;
  round: { round: number; state: string; deadline: string; cohort: number | null } | null;
  processes: {
    id: string;
    host: string;
    pid: number;
    url: string;
    role: string;
    started_at: string;
    last_heartbeat: string;
    seconds_ago: number;
    stale: boolean;
  }[];
}

/** `kourai council status`: the processes serving the council (from their heartbeats) and the current round. */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<StatusResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, LOCATION_KEYS));
    const storage = await openExisting(config);
    try {
      const now = ctx.now();
      // A day back: a process that stopped without saying so (kill -9) shows as stale for a while.
      const rows = await storage.processes(new Date(now.getTime() - 24 * 3600_000).toISOString());
      const latest = await storage.latestRound();
      return {
        backend: storage.info().backend,
        database: describeLocation(config),
        round: latest
          ? {
              round: latest.round,
              state: latest.state,
              deadline: latest.deadline,
              cohort: latest.cohort?.length ?? null,
            }
          : null,
        processes: rows.map((p) => {
          const ago = Math.max(0, (now.getTime() - Date.parse(p.heartbeatAt)) / 1000);
          return {
            id: p.id,
            host: p.host,
            pid: p.pid,
            url: p.url,
            role: p.role,
            started_at: p.startedAt,
            last_heartbeat: p.heartbeatAt,
            seconds_ago: Number(ago.toFixed(1)),
            stale: ago > STALE_SECONDS,
          };
        }),
      };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const head = `${r.backend} ${r.database}; ${r.round ? `round ${r.round.round} ${r.round.state}${r.round.cohort !== null ? ` (cohort ${r.round.cohort})` : ''}, deadline ${r.round.deadline}` : 'no round yet'}`;
    if (r.processes.length === 0) return `${head}\nno council process has reported in the last day`;
    return `${head}\n${renderTable(r.processes, [
      { header: 'PROCESS', get: (p) => p.id },
      { header: 'URL', get: (p) => p.url },
      { header: 'ROLE', get: (p) => p.role },
      {
        header: 'LAST HEARTBEAT',
        get: (p) => (p.stale ? c.yellow(`${p.seconds_ago}s ago (stale)`) : `${p.seconds_ago}s ago`),
        align: 'right',
      },
    ]).trimEnd()}`;
  },
});
