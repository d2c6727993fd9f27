/**
 * A round with this forge's real parts: the council client, the configured encoder and the
 * trainer (a worker thread, started only when an agent trains), the memoir index, the privacy
 * gate, the adapter registry and the federation memoir. `federate round` runs it; `whisper
 * --next-round` runs it as a dry run, so both show the same plan. How indexing progress is shown
 * is the caller's (a command passes src/output's indexFeedback).
 */
import type { Ctx } from '../../context.js';
import { kouraiHome } from '../../context.js';
import type { PrivacyConfig } from '../../privacy/privacy-config.js';
import { PrivacyGate } from '../../privacy/round-gate.js';
import { openIndexed, type IndexFeedback } from '../../memoir-index/indexed.js';
import { AdapterStore } from '../../train/adapter-store.js';
import { learnConfig } from '../../train/learn-config.js';
import { openTextEncoder, type TextEncoder } from '../../train/text-encoder.js';
import { TrainerWorker } from '../../train/train-in-worker.js';
import { DEFAULT_SETTINGS } from '../../train/trainer.js';
import { registryCouncilAdapters } from './council-adapters.js';
import { memoirEventsWriter } from './events-memoir.js';
import { trainerLearner } from './learner.js';
import type { Membership } from './membership.js';
import { writeKnownPolicy } from './known-policy.js';
import { abortableSleep } from '../../runtime/cancel.js';
import { EnvironmentError } from '../../errors.js';
import { runRound, type RoundEvent, type RoundOptions, type RoundResult } from './run-round.js';
import { localAnchors } from './ledger-anchors.js';
import { httpTransport, type CouncilTransport } from './transport.js';

/**
 * The transport to the joined council, with the process's Ctrl-C signal; `onWait` says a line
 * every few seconds while a request waits (a command passes src/output's note). The per-request
 * deadline is 30 s unless KOURAI_COUNCIL_TIMEOUT (a duration: 10s, 2m) says otherwise.
 */
export interface CouncilTransportOptions {
  encoding?: 'json' | 'safetensors';
  timeoutMs?: number;
  retries?: number;
  retryForMs?: number;
  onWait?: (line: string) => void;
}

export function councilTransport(
  ctx: Ctx,
  m: Pick<Membership, 'url' | 'token'>,
  opts: CouncilTransportOptions = {},
): CouncilTransport {
  const fromEnv = requestTimeoutFromEnv(ctx.env);
  return httpTransport(m.url, m.token, {
    signal: ctx.signal,
    ...(fromEnv !== null ? { timeoutMs: fromEnv } : {}),
    ...opts,
  });
}

/** KOURAI_COUNCIL_TIMEOUT as milliseconds, or null when unset; a bad value is exit 3 naming it. */
export function requestTimeoutFromEnv(env: Readonly<Record<string, string | undefined>>): number | null {
  const raw = env.KOURAI_COUNCIL_TIMEOUT;
  if (raw === undefined || raw === '') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(raw);
  const s = m ? Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[(m[2] ?? 's') as 'ms' | 's' | 'm'] : Number.NaN;
  if (!(s > 0) || !Number.isFinite(s))
    throw new EnvironmentError(`KOURAI_COUNCIL_TIMEOUT: "${raw}" is not a duration (e.g. 30s, 2m)`);
  return s * 1000;
}

/** The forge's base model (its encoder decides it), as training and the council see it. Close it. */
export async function forgeBase(ctx: Ctx, home: string): Promise<TextEncoder> {
  return openTextEncoder(learnConfig(home, ctx.env).encoder, { home, env: ctx.env, signal: ctx.signal });
}

export async function runForgeRound(
  ctx: Ctx,
  p: {
    membership: Membership;
    config: PrivacyConfig;
    memoirs: readonly string[];
    options: RoundOptions;
    transport?: CouncilTransportOptions;
    indexFeedback: IndexFeedback;
    onEvent?: (e: RoundEvent) => void;
  },
): Promise<RoundResult> {
  const home = kouraiHome(ctx);
  const anchors = localAnchors(home, p.membership);
  // A dry run spends, draws and records nothing: it reads the state, and works in a read-only home.
  const gate = p.options.dryRun
    ? PrivacyGate.openReadOnly({ home, config: p.config, now: ctx.now, anchors })
    : PrivacyGate.open({ home, config: p.config, random: ctx.secureRandom, now: ctx.now, anchors });
  const cleanup: (() => unknown)[] = [() => gate.close()];
  try {
    const encoder = await forgeBase(ctx, home);
    cleanup.unshift(() => encoder.close());
    const indexed = await openIndexed(ctx, p.memoirs, { feedback: p.indexFeedback });
    cleanup.unshift(() => indexed.index.close());
    let worker: TrainerWorker | null = null;
    cleanup.unshift(async () => worker?.close());
    const settings = DEFAULT_SETTINGS;
    const store = new AdapterStore(home, gate.db, { spec: encoder.spec, fingerprint: encoder.fingerprint });
    return await runRound({
      // The round's own retries (withRetry, one budget for the command) replace the client's.
      transport: councilTransport(ctx, p.membership, {
        encoding: p.options.encoding ?? 'json',
        retries: 0,
        ...p.transport,
      }),
      membership: p.membership,
      gate,
      learner: trainerLearner({
        encoder,
        source: { index: indexed.index, files: indexed.fileIds },
        settings,
        store,
        worker: () => (worker ??= new TrainerWorker(ctx.signal)),
      }),
      adapters: registryCouncilAdapters(store, { rank: settings.rank, alpha: settings.alpha, now: ctx.now }),
      events: memoirEventsWriter(p.membership.events_memoir, ctx.now),
      now: ctx.now,
      signal: ctx.signal,
      sleep: abortableSleep,
      onEvent: (e) => {
        // A round that reached its plan saw the council's policy: `kourai whisper` prices at it from now on.
        if (e.type === 'plan' && !p.options.dryRun && e.plan.mechanism.source === 'council') {
          const m = e.plan.mechanism;
          writeKnownPolicy(home, {
            council_key: p.membership.council_key,
            round: e.plan.round,
            clip_norm: m.clip_norm,
            noise_multiplier: m.noise_multiplier,
            seen_at: ctx.now().toISOString(),
          });
        }
        p.onEvent?.(e);
      },
      options: p.options,
    });
  } finally {
    for (const c of cleanup) await c();
  }
}
