import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { l2Norm } from '../../tensor/tensor.js';
import { loraToTensors } from '../../train/adapter-layout.js';
import type { AdapterConfig } from '../../train/adapter-files.js';
import { councilSignalOf, councilValidationOf, leanLabel, type CouncilValidation } from '../../train/applied-lean.js';
import { defineCommand } from '../types.js';
import { fmtMetric, listEntry, type AdapterListEntry } from './list.js';
import { agentArg, kindOpt, loadChecked, openRegistry, pickVersion, sameBase, shortFp, versionOpt } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { show as spec } from './commands.js';

const options = optionsSchema(spec, {
  agent: agentArg,
  kind: kindOpt,
  version: versionOpt.optional(),
});

export interface AdapterShowResult extends AdapterListEntry {
  file_sha256: string;
  alpha: number;
  target_modules: string[];
  tensors: { name: string; shape: number[]; l2: number }[];
  metrics: unknown;
  data_window: unknown;
  config: AdapterConfig;
  /** A council version: how much of it is signal, and what it did on the player's held-out scenes (null: a bond version). */
  council: CouncilShow | null;
}

export interface CouncilShow {
  update_norm: number | null;
  noise_norm: number | null;
  /** √max(0, ‖Δ‖² − noise²) / noise (null: not recorded). */
  snr: number | null;
  updates: number | null;
  /** Whether it passed validation on the player's held-out scenes (null: never measured). */
  passed: boolean | null;
  validation: CouncilValidation | null;
}

function councilShow(metrics: unknown): CouncilShow {
  const s = councilSignalOf(metrics);
  const v = councilValidationOf(metrics);
  return {
    update_norm: s?.update_norm ?? null,
    noise_norm: s?.noise_norm ?? null,
    snr: s?.snr ?? null,
    updates: s?.updates ?? null,
    passed: v?.passed ?? null,
    validation: v,
  };
}

export default defineCommand({
  options,
  async run(opts, ctx): Promise<AdapterShowResult> {
    const r = openRegistry(ctx);
    try {
      const row = pickVersion(r, opts.agent, opts.kind, opts.version);
      const loaded = loadChecked(r, row);
      const tensors = loraToTensors(loaded.config.kourai.base_spec, opts.agent, loaded.lora).map((t) => ({
        name: t.name,
        shape: t.shape,
        l2: l2Norm([t.data]),
      }));
      return {
        ...listEntry(row, sameBase(r, row)),
        file_sha256: row.fileSha256,
        alpha: row.alpha,
        target_modules: loaded.config.target_modules,
        tensors,
        metrics: row.metrics,
        data_window: row.dataWindow,
        config: loaded.config,
        council: row.kind === 'council' ? councilShow(row.metrics) : null,
      };
    } finally {
      r.close();
    }
  },
  render(a, ctx) {
    const c = colors(ctx.colorLevel);
    const m = a.metrics as {
      train_loss?: number;
      validation_loss?: number;
      epochs?: number;
      best_epoch?: number;
      stopped_early?: boolean;
      council_version?: number | null;
    } | null;
    const lines = [
      `${c.bold(`${a.agent} ${a.kind} adapter v${a.version}`)}${a.current ? c.green(' (current)') : ''}`,
      `  path         ${a.path}`,
      `  created      ${a.created_at} (${a.origin}${a.parent_version ? `, after v${a.parent_version}` : ''})`,
      `  base         ${shortFp(a.base_fingerprint)}${a.configured_base === false ? c.yellow(' — not the configured base') : ''}`,
      `  LoRA         r=${a.rank} α=${a.alpha} on ${a.target_modules.join(', ')}`,
      // A council version has no training metric; its validation on the player's scenes follows.
      ...(a.metric || !a.council ? [`  validation   ${fmtMetric(a.metric)}`] : []),
    ];
    if (m?.train_loss !== undefined)
      lines.push(
        `  loss         train ${m.train_loss.toFixed(4)} · validation ${m.validation_loss?.toFixed(4) ?? '—'} · ${m.epochs} epochs (best ${m.best_epoch}${m.stopped_early ? ', stopped early' : ''})`,
      );
    if (m?.council_version) lines.push(`  trained over council v${m.council_version}`);
    if (a.council) {
      const k = a.council;
      const fmt = (x: number | null): string => (x === null ? '—' : x.toPrecision(4));
      lines.push(
        `  signal/noise ${k.snr === null ? '— (not recorded)' : `${k.snr.toFixed(2)}${k.snr < 1 ? c.yellow(' — mostly noise') : ''}`} · ‖change‖ ${fmt(k.update_norm)} · noise ≈ ${fmt(k.noise_norm)} · ${k.updates ?? '—'} update${k.updates === 1 ? '' : 's'}`,
      );
      const v = k.validation;
      if (!v) lines.push(`  validation   never measured on your held-out scenes: not applied while you have a bond`);
      else {
        const d = v.choice.overall;
        lines.push(
          `  validation   ${v.passed ? c.green('passed') : c.yellow('not passed')} on ${v.examples} held-out examples in ${v.scenes} scenes (with bond ${v.bond_version === null ? 'none' : `v${v.bond_version}`}): ${d.scores.map((x) => `${leanLabel(x.lean)} ${(x.accuracy * 100).toFixed(0)}%`).join(' · ')} → ${leanLabel(d.lean)}`,
        );
        for (const [t, td] of Object.entries(v.choice.byTaskType))
          if (td.reason !== 'too_few')
            lines.push(`               ${t}: ${td.examples} examples → ${leanLabel(td.lean)}`);
      }
    }
    lines.push(
      '',
      renderTable(a.tensors, [
        { header: 'TENSOR', get: (t) => t.name },
        { header: 'SHAPE', get: (t) => `[${t.shape.join(', ')}]` },
        { header: 'L2', get: (t) => t.l2.toPrecision(4), align: 'right' },
      ]).trimEnd(),
    );
    return lines.join('\n');
  },
});
