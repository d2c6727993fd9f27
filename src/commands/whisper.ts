import { note as noteLine } from '../output/notice.js';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../context.js';
import { CancelledError, NotFoundError } from '../errors.js';
import type { Agent } from '../memoir/format/agents.js';
import { colors } from '../output/color.js';
import { VERDICT_SHORT, type GaugeLevel } from '../privacy/budget.js';
import { PrivacyGate } from '../privacy/round-gate.js';
import { bar, buildWhisperReport, percent, type PricedAt, type WhisperReport } from '../privacy/whisper-report.js';
import { applyCouncilPolicy } from '../privacy/council-policy.js';
import type { PrivacyConfig } from '../privacy/privacy-config.js';
import { readKnownPolicy } from '../federation/round/known-policy.js';
import { delta as fmtDelta, epsilon as fmtEps, ratio } from '../format.js';
import { indexFeedback } from '../output/index-feedback.js';
import { privacyConfigFor } from '../privacy/privacy-config.js';
import { openIndexed } from '../memoir-index/indexed.js';
import { MemoirQueries } from '../memoir-index/memoir-queries.js';
import { budgetFlags } from './options.js';
import { defineCommand } from './types.js';
import { assertTerminalFits, MIN_SIZE } from '../ui/terminal.js';
import { readMembership, requireMembership } from '../federation/round/membership.js';
import { localAnchors } from '../federation/round/ledger-anchors.js';
import type { FederationPlan } from '../federation/round/plan.js';
import { renderPlan } from '../output/round-text.js';
import { optionsSchema } from './spec-schema.js';
import { whisperCommand as spec } from './top-level.js';

const options = optionsSchema(spec, {
  round: z.string().min(1).optional(),
  ...budgetFlags,
});

/** Shareable entries per agent (newest revisions only), from the memoir index. Local only. */
async function shareableCounts(
  ctx: Ctx,
  memoirs: readonly string[],
  quiet: boolean,
): Promise<{ counts: Partial<Record<Agent, number>>; note: string | null }> {
  let indexed;
  try {
    indexed = await openIndexed(ctx, memoirs, { feedback: indexFeedback(ctx, quiet), readOnly: true });
  } catch (err) {
    if (err instanceof NotFoundError && memoirs.length === 0)
      return {
        counts: {},
        note: 'no memoirs found: every agent has 0 shareable entries (kourai memoir synth creates a sample forge)',
      };
    throw err;
  }
  const { index, fileIds } = indexed;
  try {
    return { counts: new MemoirQueries(index).shareableByAgent(fileIds), note: null };
  } finally {
    index.close();
  }
}

/**
 * S and σ to price the next round at: a joined forge's rounds are charged at the council's σ, so
 * its last published policy (as this forge last saw it) when known; else the forge's own.
 */
function pricing(
  home: string,
  config: PrivacyConfig,
): { config: PrivacyConfig; pricedAt: PricedAt; note: string | null } {
  const own = {
    config,
    pricedAt: {
      source: 'forge' as const,
      noise_multiplier: config.noiseMultiplier,
      clip_norm: config.clipNorm,
      council_round: null,
      seen_at: null,
    },
  };
  const m = readMembership(home);
  if (!m) return { ...own, note: null };
  const known = readKnownPolicy(home, m.council_key);
  if (!known)
    return {
      ...own,
      note: `next-round costs here are at this forge's σ = ${config.noiseMultiplier}: no policy of the joined council is known locally yet; a council round charges the council's σ (kourai whisper --next-round asks it)`,
    };
  const d = applyCouncilPolicy(config, { clipNorm: known.clip_norm, noiseMultiplier: known.noise_multiplier });
  if (!d.ok && d.reason === 'floor')
    return {
      ...own,
      note: `the council's last published policy (round ${known.round}) is outside this forge's privacy floor: ${d.message.replace(/: nothing was trained, sent or spent$/, '')}; a council round would send nothing; costs here are at this forge's σ = ${config.noiseMultiplier}`,
    };
  if (!d.ok)
    return {
      ...own,
      note: `the council's last published σ = ${known.noise_multiplier} (round ${known.round}) is one the Whisper Limit cannot afford: a council round would send nothing; costs here are at this forge's σ = ${config.noiseMultiplier}`,
    };
  return {
    config: d.config,
    pricedAt: {
      source: 'council',
      noise_multiplier: known.noise_multiplier,
      clip_norm: known.clip_norm,
      council_round: known.round,
      seen_at: known.seen_at,
    },
    note: `next-round costs are at the council's σ = ${known.noise_multiplier}, S = ${known.clip_norm} (its policy of round ${known.round}, seen ${known.seen_at.slice(0, 16).replace('T', ' ')} UTC); kourai whisper --next-round asks for the current one`,
  };
}

export async function whisperReport(ctx: Ctx, opts: z.output<typeof options>): Promise<WhisperReport> {
  const resolved = privacyConfigFor(ctx, opts);
  const { counts, note } = await shareableCounts(ctx, opts.memoir, opts.json || ctx.interactive);
  const home = kouraiHome(ctx);
  const gate = PrivacyGate.openReadOnly({ home, config: resolved.config, now: ctx.now, anchors: localAnchors(home) });
  try {
    const priced = pricing(home, resolved.config);
    const plan = gate.withConfig(priced.config).planRound({ round: opts.round ?? null, shareable: counts });
    const releases = gate.releases();
    const notes = [...(note ? [note] : []), ...(priced.note ? [priced.note] : [])];
    return buildWhisperReport({
      plan,
      origin: resolved.origin,
      file: resolved.file,
      releases,
      norms: gate.ledger.norms(),
      notes,
      forgeConfig: resolved.config,
      pricedAt: priced.pricedAt,
    });
  } finally {
    gate.close();
  }
}

/** The report, and with --next-round what the joined council's next round would send. */
export type WhisperResult = WhisperReport & { next_round?: FederationPlan };

/**
 * The plan `kourai federate round --dry-run` prints (the same function builds it): it asks the
 * joined council for its round and policy, counts the council view, trains and sends nothing.
 */
async function nextRoundPlan(ctx: Ctx, opts: z.output<typeof options>): Promise<FederationPlan> {
  // Loaded only for --next-round: the round service brings the trainer and the council client,
  // a quarter of the start-up of a plain `kourai whisper`.
  const { runForgeRound } = await import('../federation/round/forge-round.js');
  const r = await runForgeRound(ctx, {
    membership: requireMembership(kouraiHome(ctx)),
    config: privacyConfigFor(ctx, opts).config,
    memoirs: opts.memoir,
    indexFeedback: indexFeedback(ctx, true),
    transport: { timeoutMs: 15_000, retries: 1, onWait: (line) => noteLine(ctx, line) },
    options: { dryRun: true, wait: false, waitForMs: 0, pollMs: 1000, retryForMs: 0, encoding: 'json' },
  });
  if (r.outcome !== 'dry_run') throw new Error('a dry run came back with a sent round');
  return r.plan;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<WhisperResult> {
    const report: WhisperResult = await whisperReport(ctx, opts);
    if (opts.nextRound) report.next_round = await nextRoundPlan(ctx, opts);
    if (ctx.interactive && !opts.json) {
      const size = assertTerminalFits(
        ctx,
        MIN_SIZE.whisper,
        'Whisper Limit gauge',
        'pass --no-input for the text gauge',
      );
      const { showWhisper } = await import('../ui/whisper/show-whisper.js');
      if ((await showWhisper(ctx, report, size)) === 'cancel') throw new CancelledError('whisper cancelled');
    }
    return report;
  },
  render(r, ctx) {
    const next = r.next_round ? `\n\n${renderPlan(r.next_round, ctx.colorLevel)}` : '';
    if (ctx.interactive) return next.trimStart(); // the gauge was shown
    return `${renderWhisperText(r, ctx.colorLevel)}${next}`;
  },
});

const levelColor = (c: ReturnType<typeof colors>, level: GaugeLevel | null): ((s: string) => string) =>
  level === 'ok' ? c.green : level === 'low' ? c.yellow : level === 'critical' || level === 'exhausted' ? c.red : c.dim;

/** The gauge as plain text (non-interactive runs, pipes, CI). */
export function renderWhisperText(r: WhisperReport, colorLevel: 0 | 1 | 2 | 3): string {
  const c = colors(colorLevel);
  const f = r.forge;
  const col = levelColor(c, f.level);
  const lines: string[] = [];
  lines.push(c.bold('Whisper Limit'));
  lines.push(
    `forge  ${col(bar(f.remaining_fraction, 24))} ${col(percent(f.remaining_fraction).padStart(4))} left   ε ${fmtEps(f.epsilon_spent)} of ${r.config.forge_epsilon} spent at δ = ${fmtDelta(r.config.delta)}, ${f.releases} release${f.releases === 1 ? '' : 's'}`,
  );
  lines.push(
    c.dim(
      `next round${r.round ? ` (${r.round})` : ''}: ${f.speakers_next_round} agent${f.speakers_next_round === 1 ? '' : 's'} speak; forge ε → ${fmtEps(f.epsilon_after_next_round)}; each delta clipped to S = ${r.priced_at.clip_norm}, noise σ = ${r.priced_at.noise_multiplier} (${r.priced_at.source === 'council' ? `the council's, round ${r.priced_at.council_round ?? '?'}` : "this forge's"})`,
    ),
  );
  lines.push('');
  const w = Math.max(...r.agents.map((a) => a.agent.length));
  for (const a of r.agents) {
    if (a.consent === 'locked') {
      lines.push(`${a.agent.padEnd(w)}  ${c.dim(`${' '.repeat(12)}       bond-only: never leaves the forge`)}`);
      continue;
    }
    const ac = levelColor(c, a.level);
    const frac = a.remaining_fraction ?? 0;
    const verdict = a.speaks ? c.green('speaks') : c.yellow('silent');
    const cost = a.speaks ? `+${fmtEps(a.next_round_epsilon_cost ?? 0)} ε` : '';
    const mags = a.contributions.slice(-5).map((x) => (x.clipped_fraction === null ? '·' : ratio(x.clipped_fraction)));
    lines.push(
      `${a.agent.padEnd(w)}  ${ac(bar(frac, 12))} ${ac(percent(frac).padStart(4))}  ${verdict.padEnd(6)} ${String(a.shareable_entries).padStart(5)} shareable  ${cost.padEnd(10)} ${c.dim(VERDICT_SHORT[a.verdict])}`,
    );
    if (mags.length > 0)
      lines.push(
        c.dim(
          `${' '.repeat(w)}  past contributions |clip Δ|/S: ${mags.join(' ')}${a.contributions.length > 5 ? ` (last 5 of ${a.contributions.length})` : ''}`,
        ),
      );
  }
  for (const n of r.notes) lines.push(c.yellow(`note: ${n}`));
  return lines.join('\n');
}
