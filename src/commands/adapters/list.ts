import { z } from 'zod';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import type { AdapterRow } from '../../store/adapter-registry.js';
import { agentListOpt } from '../options.js';
import { defineCommand } from '../types.js';
import { openRegistry, sameBase, shortFp } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { list as spec } from './commands.js';

const options = optionsSchema(spec, {
  agent: agentListOpt,
  kind: z.enum(['bond', 'council'], { error: 'must be bond or council' }).optional(),
});

export interface AdapterListEntry {
  agent: string;
  kind: 'bond' | 'council';
  version: number;
  current: boolean;
  path: string;
  origin: string;
  created_at: string;
  parent_version: number | null;
  rank: number;
  base_fingerprint: string;
  /** Whether it was trained over the configured base (null: the configured endpoint base is unknown offline). */
  configured_base: boolean | null;
  pruned_at: string | null;
  examples: number | null;
  metric: { kind: string; name: string; value: number; baselines: { name: string; value: number }[] } | null;
}

export interface AdapterListResult {
  base_fingerprint: string | null;
  adapters: AdapterListEntry[];
}

export function listEntry(row: AdapterRow, configured: boolean | null): AdapterListEntry {
  const m = row.metrics as { metric?: AdapterListEntry['metric']; examples?: { used?: number } } | null;
  return {
    agent: row.agent,
    kind: row.kind,
    version: row.version,
    current: row.current,
    path: row.path,
    origin: row.origin,
    created_at: row.createdAt,
    parent_version: row.parentVersion,
    rank: row.rank,
    base_fingerprint: row.baseFingerprint,
    configured_base: configured,
    pruned_at: row.prunedAt,
    examples: m?.examples?.used ?? null,
    metric: m?.metric ?? null,
  };
}

export function fmtMetric(m: AdapterListEntry['metric']): string {
  if (!m) return '—';
  const pct = m.name === 'mean_abs_error' ? m.value.toFixed(3) : `${(m.value * 100).toFixed(0)}%`;
  const best = m.baselines.length
    ? Math.max(...m.baselines.map((b) => (m.name === 'mean_abs_error' ? -b.value : b.value)))
    : null;
  const base =
    best === null
      ? ''
      : ` (baseline ${m.name === 'mean_abs_error' ? (-best).toFixed(3) : `${(best * 100).toFixed(0)}%`})`;
  return `${m.name.replace(/_/g, ' ')} ${pct}${base}`;
}

export default defineCommand({
  options,
  async run(opts, ctx): Promise<AdapterListResult> {
    const r = openRegistry(ctx);
    try {
      const rows = r.registry
        .list({ agent: opts.agent, ...(opts.kind ? { kind: opts.kind } : {}) })
        .filter((row) => opts.all || row.prunedAt === null);
      return {
        base_fingerprint: r.base?.fingerprint ?? null,
        adapters: rows.map((row) => listEntry(row, sameBase(r, row))),
      };
    } finally {
      r.close();
    }
  },
  render(res, ctx) {
    const c = colors(ctx.colorLevel);
    if (res.adapters.length === 0) return c.dim('no adapters yet: train bond adapters with `kourai train bond`');
    const table = renderTable(res.adapters, [
      { header: 'AGENT', get: (a) => a.agent },
      { header: 'KIND', get: (a) => a.kind },
      { header: 'VERSION', get: (a) => `${a.current ? c.green('*') : ' '}v${a.version}`, align: 'right' },
      { header: 'CREATED', get: (a) => a.created_at.slice(0, 16).replace('T', ' ') },
      { header: 'EXAMPLES', get: (a) => (a.examples === null ? '—' : String(a.examples)), align: 'right' },
      { header: 'VALIDATION', get: (a) => fmtMetric(a.metric) },
      {
        header: 'BASE',
        get: (a) =>
          a.configured_base === false
            ? c.yellow(`${shortFp(a.base_fingerprint)} (not the configured base)`)
            : c.dim(shortFp(a.base_fingerprint)),
      },
      { header: 'STATE', get: (a) => (a.pruned_at ? c.dim('pruned') : a.current ? c.green('current') : '') },
    ]);
    return `${table}${c.dim('* current version · kourai adapters show <agent> for details')}`;
  },
});
