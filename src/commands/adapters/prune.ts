import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AGENTS, type Agent } from '../../memoir/format/agents.js';
import { colors } from '../../output/color.js';
import { processAlive } from '../../runtime/process-alive.js';
import { kindDir } from '../../train/adapter-files.js';
import { agentListOpt } from '../options.js';
import { defineCommand } from '../types.js';
import { openRegistry } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { prune as spec } from './commands.js';

const options = optionsSchema(spec, {
  agent: agentListOpt,
  kind: z.enum(['bond', 'council'], { error: 'must be bond or council' }).optional(),
  keep: z.coerce.number({ error: 'must be a whole number' }).int().min(0).default(3),
});

export interface PruneResult {
  dry_run: boolean;
  keep: number;
  /** Versions whose files were (or would be) deleted; their registry rows stay, marked pruned. */
  pruned: { agent: string; kind: string; version: number; path: string }[];
  /** Directories no registry row names (a run stopped before its commit, a later version since registered) and temporary directories whose writer is gone. */
  leftovers: string[];
}

/**
 * Deletes the files of old versions: per agent and kind, the current version and the `keep`
 * newest others stay. Registry rows stay (marked pruned), so history and metrics survive.
 */
export default defineCommand({
  options,
  async run(opts, ctx): Promise<PruneResult> {
    const r = openRegistry(ctx, opts.dryRun ? 'read' : 'write');
    try {
      const rows = r.registry.list({ agent: opts.agent, ...(opts.kind ? { kind: opts.kind } : {}) });
      const pruned: PruneResult['pruned'] = [];
      const groups = new Map<string, typeof rows>();
      for (const row of rows)
        groups.set(`${row.agent}/${row.kind}`, [...(groups.get(`${row.agent}/${row.kind}`) ?? []), row]);
      for (const list of groups.values()) {
        const alive = list.filter((x) => x.prunedAt === null && !x.current).sort((a, b) => b.version - a.version);
        for (const row of alive.slice(opts.keep))
          pruned.push({ agent: row.agent, kind: row.kind, version: row.version, path: row.path });
      }
      const leftovers: string[] = [];
      const agents = (opts.agent.length ? opts.agent : AGENTS) as readonly Agent[];
      for (const agent of agents) {
        for (const kind of opts.kind ? [opts.kind] : (['bond', 'council'] as const)) {
          const dir = kindDir(r.home, agent, kind);
          if (!existsSync(dir)) continue;
          const mine = rows.filter((x) => x.agent === agent && x.kind === kind);
          const known = new Set(mine.map((x) => `v${x.version}`));
          const newest = Math.max(0, ...mine.map((x) => x.version));
          for (const name of readdirSync(dir)) {
            if (known.has(name)) continue;
            // A directory another process may still be registering is left alone: an unregistered
            // version only once a later one is registered, a temporary one only once its writer is gone.
            const v = /^v(\d+)$/.exec(name);
            const tmp = /^\.v\d+\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name);
            if ((v && Number(v[1]) < newest) || (tmp && !processAlive(Number(tmp[1])))) leftovers.push(join(dir, name));
          }
        }
      }
      if (!opts.dryRun) {
        const at = ctx.now().toISOString();
        for (const p of pruned) {
          rmSync(join(r.home, p.path), { recursive: true, force: true });
          r.registry.markPruned(p.agent, p.kind as 'bond' | 'council', p.version, at);
        }
        for (const l of leftovers) rmSync(l, { recursive: true, force: true });
      }
      return { dry_run: opts.dryRun, keep: opts.keep, pruned, leftovers };
    } finally {
      r.close();
    }
  },
  render(x, ctx) {
    const c = colors(ctx.colorLevel);
    const verb = x.dry_run ? 'would delete' : 'deleted';
    if (!x.pruned.length && !x.leftovers.length)
      return c.dim(`nothing to prune (keeping the current version and ${x.keep} more per agent and kind)`);
    return [
      ...x.pruned.map((p) => `${verb} ${p.agent} ${p.kind} v${p.version} (${p.path})`),
      ...x.leftovers.map((l) => `${verb} leftover ${l}`),
    ].join('\n');
  },
});
