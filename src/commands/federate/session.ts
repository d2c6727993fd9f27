import type { Ctx } from '../../context.js';
import { kouraiHome } from '../../context.js';
import { registryCouncilAdapters } from '../../federation/round/council-adapters.js';
import { memoirEventsWriter } from '../../federation/round/events-memoir.js';
import { trainerLearner } from '../../federation/round/learner.js';
import type { Membership } from '../../federation/round/membership.js';
import { abortableSleep } from '../../federation/round/retry.js';
import { runRound, type RoundEvent, type RoundOptions, type RoundResult } from '../../federation/round/run-round.js';
import type { PrivacyConfig } from '../../privacy/privacy-config.js';
import { PrivacyGate } from '../../privacy/round-gate.js';
import { AdapterStore } from '../../train/adapter-store.js';
import { TrainerWorker } from '../../train/train-in-worker.js';
import { DEFAULT_SETTINGS } from '../../train/trainer.js';
import { indexFeedback } from '../../output/index-feedback.js';
import { openIndexed } from '../../store/indexed.js';
import { councilTransport, forgeBase } from './shared.js';

/**
 * A round with this forge's real parts: the council client, the configured encoder and the
 * trainer (a worker thread, started only when an agent trains), the memoir index, the privacy
 * gate, the adapter registry and the federation memoir. `federate round` runs it; `whisper`
 * runs it as a dry run, so both show the same plan.
 */
export async function runForgeRound(
  ctx: Ctx,
  p: { membership: Membership; config: PrivacyConfig; memoirs: readonly string[]; options: RoundOptions; transport?: { timeoutMs?: number; retries?: number }; quietIndex: boolean; onEvent?: (e: RoundEvent) => void },
): Promise<RoundResult> {
  const home = kouraiHome(ctx);
  const gate = PrivacyGate.open({ home, config: p.config, random: ctx.secureRandom, now: ctx.now });
  const cleanup: (() => unknown)[] = [() => gate.close()];
  try {
    const encoder = await forgeBase(ctx, home);
    cleanup.unshift(() => encoder.close());
    const indexed = await openIndexed(ctx, p.memoirs, { feedback: indexFeedback(ctx, p.quietIndex) });
    cleanup.unshift(() => indexed.index.close());
    let worker: TrainerWorker | null = null;
    cleanup.unshift(async () => worker?.close());
    const settings = DEFAULT_SETTINGS;
    const store = new AdapterStore(home, gate.db, { spec: encoder.spec, fingerprint: encoder.fingerprint });
    return await runRound({
      transport: councilTransport(ctx, p.membership, { encoding: p.options.encoding ?? 'json', ...p.transport }),
      membership: p.membership,
      gate,
      learner: trainerLearner({ encoder, source: { index: indexed.index, files: indexed.fileIds }, settings, worker: () => (worker ??= new TrainerWorker(ctx.signal)) }),
      adapters: registryCouncilAdapters(store, { rank: settings.rank, alpha: settings.alpha, now: ctx.now }),
      events: memoirEventsWriter(p.membership.events_memoir, ctx.now),
      now: ctx.now,
      signal: ctx.signal,
      sleep: abortableSleep,
      ...(p.onEvent ? { onEvent: p.onEvent } : {}),
      options: p.options,
    });
  } finally {
    for (const c of cleanup) await c();
  }
}
