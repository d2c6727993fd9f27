import { z } from 'zod';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { l2Norm } from '../../tensor/tensor.js';
import { loraToTensors } from '../../train/adapter-layout.js';
import type { AdapterConfig } from '../../train/adapter-files.js';
import { defineCommand } from '../types.js';
import { fmtMetric, listEntry, type AdapterListEntry } from './list.js';
import { agentArg, kindOpt, loadChecked, openRegistry, pickVersion, sameBase, shortFp, versionOpt } from './shared.js';

const options = z.object({ agent: agentArg, kind: kindOpt, version: versionOpt.optional(), json: z.boolean().default(false) });

export interface AdapterShowResult extends AdapterListEntry {
  file_sha256: string;
  alpha: number;
  target_modules: string[];
  tensors: { name: string; shape: number[]; l2: number }[];
  metrics: unknown;
  data_window: unknown;
  config: AdapterConfig;
}

export default defineCommand({
  options,
  async run(opts, ctx): Promise<AdapterShowResult> {
    const r = openRegistry(ctx);
    try {
      const row = pickVersion(r, opts.agent, opts.kind, opts.version);
      const loaded = loadChecked(r, row);
      const tensors = loraToTensors(loaded.config.kourai.base_spec, opts.agent, loaded.lora).map((t) => ({ name: t.name, shape: t.shape, l2: l2Norm([t.data]) }));
      return {
        ...listEntry(row, sameBase(r, row)),
        file_sha256: row.fileSha256,
        alpha: row.alpha,
        target_modules: loaded.config.target_modules,
        tensors,
        metrics: row.metrics,
        data_window: row.dataWindow,
        config: loaded.config,
      };
    } finally {
      r.close();
    }
  },
  render(a, ctx) {
    const c = colors(ctx.colorLevel);
    const m = a.metrics as { train_loss?: number; validation_loss?: number; epochs?: number; best_epoch?: number; stopped_early?: boolean; council_version?: number | null } | null;
    const lines = [
      `${c.bold(`${a.agent} ${a.kind} adapter v${a.version}`)}${a.current ? c.green(' (current)') : ''}`,
      `  path         ${a.path}`,
      `  created      ${a.created_at} (${a.origin}${a.parent_version ? `, after v${a.parent_version}` : ''})`,
      `  base         ${shortFp(a.base_fingerprint)}${a.configured_base === false ? c.yellow(' — not the configured base') : ''}`,
      `  LoRA         r=${a.rank} α=${a.alpha} on ${a.target_modules.join(', ')}`,
      `  validation   ${fmtMetric(a.metric)}`,
    ];
    if (m?.train_loss !== undefined) lines.push(`  loss         train ${m.train_loss.toFixed(4)} · validation ${m.validation_loss?.toFixed(4) ?? '—'} · ${m.epochs} epochs (best ${m.best_epoch}${m.stopped_early ? ', stopped early' : ''})`);
    if (m?.council_version) lines.push(`  trained over council v${m.council_version}`);
    lines.push('', renderTable(a.tensors, [
      { header: 'TENSOR', get: (t) => t.name },
      { header: 'SHAPE', get: (t) => `[${t.shape.join(', ')}]` },
      { header: 'L2', get: (t) => t.l2.toPrecision(4), align: 'right' },
    ]).trimEnd());
    return lines.join('\n');
  },
});
