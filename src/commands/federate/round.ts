import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { UsageError } from '../../errors.js';
import { parseDuration } from '../../council/config.js';
import { requireMembership } from '../../federation/round/membership.js';
import type { RoundResult } from '../../federation/round/run-round.js';
import { sceneOf } from '../../federation/round/scenes.js';
import { privacyConfigFor } from '../../privacy/privacy-config.js';
import { budgetFlags } from '../options.js';
import { optionsSchema } from '../spec-schema.js';
import { round as spec } from './commands.js';
import { defineCommand } from '../types.js';
import { renderRoundResult, roundProgress } from '../../output/round-text.js';
import { playScenes } from './scene.js';
import { runForgeRound } from '../../federation/round/forge-round.js';
import { indexFeedback } from '../../output/index-feedback.js';
import { note } from '../../output/notice.js';

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

const options = optionsSchema(spec, {
  waitFor: duration('--wait-for', '30m'),
  retryFor: duration('--retry-for', '10m'),
  encoding: z.enum(['json', 'safetensors']).default('json'),
  ...budgetFlags,
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
    if (opts.waitFor === 0 && opts.wait)
      throw new UsageError('--wait-for 0: pass --no-wait to return right after sending');
    const membership = requireMembership(home);
    const { config } = privacyConfigFor(ctx, opts);
    const result = await runForgeRound(ctx, {
      membership,
      config,
      memoirs: opts.memoir,
      indexFeedback: indexFeedback(ctx, opts.json || ctx.interactive),
      onEvent: roundProgress(ctx.stderr, { now: () => ctx.now().getTime() }),
      transport: { onWait: (line) => note(ctx, line) },
      options: {
        dryRun: opts.dryRun,
        wait: opts.wait,
        waitForMs: opts.waitFor,
        pollMs: 1000,
        retryForMs: opts.retryFor,
        encoding: opts.encoding,
      },
    });
    // The round came home: in a terminal, the Council of Sisters (and the Stoa Falls) play now.
    if (result.outcome === 'completed' && ctx.interactive && !opts.json) {
      const scenes = [
        sceneOf(result.details),
        ...(result.details.exiles.length ? [sceneOf({ ...result.details, beat: 'stoa_falls' })] : []),
      ];
      await playScenes(ctx, scenes);
    }
    return result;
  },
  render: (r, ctx) => renderRoundResult(r, ctx.colorLevel),
});
