import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { UsageError } from '../../errors.js';
import { parseDuration } from '../../council/config.js';
import { registryCouncilAdapters } from '../../federation/round/council-adapters.js';
import { memoirEventsWriter } from '../../federation/round/events-memoir.js';
import { trainerLearner } from '../../federation/round/learner.js';
import { requireMembership } from '../../federation/round/membership.js';
import { abortableSleep } from '../../federation/round/retry.js';
import { runRound, type RoundResult } from '../../federation/round/run-round.js';
import { PrivacyGate } from '../../privacy/round-gate.js';
import { AdapterStore } from '../../train/adapter-store.js';
import { TrainerWorker } from '../../train/train-in-worker.js';
import { DEFAULT_SETTINGS } from '../../train/trainer.js';
import { memoirOpt, openIndexed } from '../memoir/shared.js';
import { budgetFlags, configFrom } from '../privacy/shared.js';
import { defineCommand } from '../types.js';
import { renderRoundResult, roundProgress } from './round-text.js';
import { playScenes } from './scene.js';
import { sceneOf } from '../../federation/round/scenes.js';
import { councilTransport, forgeBase } from './shared.js';

const duration = (flag: string, dflt: string) =>
  z
    .string()
    .default(dflt)
    .transform((v, c) => {
      try {
        const s = parseDuration(v);
        if (!(s >= 0) || !Number.isFinite(s)) throw new Error(`"${v}" is not a duration`);
        return s * 1000;
      } catch (err) {
        c.addIssue({ code: 'custom', message: `${(err as Error).message} (${flag})` });
        return z.NEVER;
      }
    });

const options = z.object({
  memoir: memoirOpt,
  dryRun: z.boolean().default(false),
  wait: z.boolean().default(true),
  waitFor: duration('--wait-for', '30m'),
  retryFor: duration('--retry-for', '10m'),
  encoding: z.enum(['json', 'safetensors']).default('json'),
  ...budgetFlags,
  json: z.boolean().default(false),
});

/**
 * `kourai federate round`: one federation round (src/federation/round/run-round.ts) with the real
 * council client, trainer, privacy gate, adapter registry and memoir. `--dry-run` prints the plan
 * — per agent exactly what would leave — and sends nothing.
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<RoundResult> {
    const home = kouraiHome(ctx);
    const membership = requireMembership(home);
    const { config } = configFrom(ctx, opts);
    if (opts.waitFor === 0 && opts.wait) throw new UsageError('--wait-for 0: pass --no-wait to return right after sending');
    const gate = PrivacyGate.open({ home, config, random: ctx.secureRandom, now: ctx.now });
    const cleanup: (() => unknown)[] = [() => gate.close()];
    try {
      const encoder = await forgeBase(ctx, home);
      cleanup.unshift(() => encoder.close());
      const indexed = openIndexed(ctx, opts.memoir, { quiet: opts.json || ctx.interactive });
      cleanup.unshift(() => indexed.index.close());
      let worker: TrainerWorker | null = null;
      cleanup.unshift(async () => worker?.close());
      const settings = DEFAULT_SETTINGS;
      const learner = trainerLearner({
        encoder,
        source: { index: indexed.index, files: indexed.fileIds },
        settings,
        worker: () => (worker ??= new TrainerWorker(ctx.signal)),
      });
      const store = new AdapterStore(home, gate.db, { spec: encoder.spec, fingerprint: encoder.fingerprint });
      const progress = roundProgress(ctx.stderr, { now: () => ctx.now().getTime() });
      const result = await runRound({
        transport: councilTransport(ctx, membership, { encoding: opts.encoding }),
        membership,
        gate,
        learner,
        adapters: registryCouncilAdapters(store, { rank: settings.rank, alpha: settings.alpha, now: ctx.now }),
        events: memoirEventsWriter(membership.events_memoir, ctx.now),
        now: ctx.now,
        signal: ctx.signal,
        sleep: abortableSleep,
        onEvent: progress,
        options: { dryRun: opts.dryRun, wait: opts.wait, waitForMs: opts.waitFor, pollMs: 1000, retryForMs: opts.retryFor, encoding: opts.encoding },
      });
      // The round came home: in a terminal, the Council of Sisters (and the Stoa Falls) play now.
      if (result.outcome === 'completed' && ctx.interactive && !opts.json) {
        const scenes = [sceneOf(result.details), ...(result.details.exiles.length ? [sceneOf({ ...result.details, beat: 'stoa_falls' })] : [])];
        await playScenes(ctx, scenes);
      }
      return result;
    } finally {
      for (const c of cleanup) await c();
    }
  },
  render: (r, ctx) => renderRoundResult(r, ctx.colorLevel),
});
