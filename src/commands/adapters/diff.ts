import { UsageError } from '../../errors.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { differenceNorm, effectiveNorm } from '../../train/adapter-delta.js';
import { defineCommand } from '../types.js';
import { fmtMetric, listEntry, type AdapterListEntry } from './list.js';
import { agentArg, kindOpt, loadChecked, openRegistry, pickVersion, sameBase, versionOpt } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { diff as spec } from './commands.js';

const options = optionsSchema(spec, {
  agent: agentArg,
  kind: kindOpt,
  from: versionOpt.optional(),
  to: versionOpt.optional(),
});

export interface ModuleDiff {
  module: string;
  /** Frobenius norms of the effective updates (α/r)·B·A. */
  from_norm: number;
  to_norm: number;
  diff_norm: number;
  /** diff_norm / to_norm (0 when both are zero). */
  relative: number;
}

export interface AdapterDiffResult {
  agent: string;
  kind: 'bond' | 'council';
  from: AdapterListEntry;
  to: AdapterListEntry;
  modules: ModuleDiff[];
}

export default defineCommand({
  options,
  async run(opts, ctx): Promise<AdapterDiffResult> {
    const r = openRegistry(ctx);
    try {
      const toRow = pickVersion(r, opts.agent, opts.kind, opts.to);
      const fromVersion = opts.from ?? toRow.parentVersion ?? undefined;
      if (fromVersion === undefined)
        throw new UsageError(
          `${opts.agent} ${opts.kind} v${toRow.version} has no earlier version to compare with`,
          'name one with --from N',
        );
      const fromRow = pickVersion(r, opts.agent, opts.kind, fromVersion);
      const a = loadChecked(r, fromRow);
      const b = loadChecked(r, toRow);
      if (fromRow.baseFingerprint !== toRow.baseFingerprint)
        throw new UsageError(
          `v${fromRow.version} and v${toRow.version} are over different bases: their updates are not comparable`,
        );
      const modules = (['dense', 'head', 'direct'] as const).map((m, k): ModuleDiff => {
        const ca = a.config.lora_alpha / a.lora.rank;
        const cb = b.config.lora_alpha / b.lora.rank;
        const fromNorm = effectiveNorm([{ lora: a.lora, coef: ca }], m);
        const toNorm = effectiveNorm([{ lora: b.lora, coef: cb }], m);
        const diff = differenceNorm({ lora: b.lora, coef: cb }, { lora: a.lora, coef: ca }, m);
        return {
          module: b.config.target_modules[k] as string,
          from_norm: fromNorm,
          to_norm: toNorm,
          diff_norm: diff,
          relative: toNorm > 0 ? diff / toNorm : 0,
        };
      });
      return {
        agent: opts.agent,
        kind: opts.kind,
        from: listEntry(fromRow, sameBase(r, fromRow)),
        to: listEntry(toRow, sameBase(r, toRow)),
        modules,
      };
    } finally {
      r.close();
    }
  },
  render(d, ctx) {
    const c = colors(ctx.colorLevel);
    const head = `${c.bold(`${d.agent} ${d.kind}: v${d.from.version} → v${d.to.version}`)}\n  validation  ${fmtMetric(d.from.metric)} → ${fmtMetric(d.to.metric)}\n  examples    ${d.from.examples ?? '—'} → ${d.to.examples ?? '—'}\n`;
    const table = renderTable(d.modules, [
      { header: 'MODULE', get: (m) => m.module },
      { header: `‖ΔW‖ v${d.from.version}`, get: (m) => m.from_norm.toPrecision(4), align: 'right' },
      { header: `‖ΔW‖ v${d.to.version}`, get: (m) => m.to_norm.toPrecision(4), align: 'right' },
      { header: '‖difference‖', get: (m) => m.diff_norm.toPrecision(4), align: 'right' },
      { header: 'RELATIVE', get: (m) => `${(m.relative * 100).toFixed(1)}%`, align: 'right' },
    ]);
    return `${head}\n${table}`;
  },
});
