import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { checkServeConfig, resolveCouncilConfig, type ConfigKey } from '../../council/config.js';
import { describeLocation } from '../../council/open-storage.js';
import { privacyPolicyOf } from '../../council/round-settings.js';
import { startCouncilServer } from '../../council/server.js';
import type { Ctx } from '../../context.js';
import { EnvironmentError } from '../../errors.js';
import { clockFrom } from '../../runtime/clock.js';
import { writeNdjson } from '../../output/json.js';
import { logLine } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { defineCommand } from '../types.js';
import { serve as spec } from './commands.js';
import { configFlags } from './shared.js';

const options = optionsSchema(spec, { threads: z.coerce.number().int().min(1).optional() });

const KEYS: ConfigKey[] = [
  'host',
  'port',
  'data_dir',
  'database',
  'cohort',
  'aggregation_lease',
  'strategy',
  'byzantine',
  'trim',
  'multikrum_m',
  'selection',
  'min_forges',
  'round_deadline',
  'payload_limit',
  'max_in_flight',
  'weights',
  'tail_margin',
  'clip_norm',
  'noise_multiplier',
  'epsilon',
  'epsilon_rounds',
  'delta',
  'agent_epsilon',
  'layouts',
  'max_uploads_per_forge',
  'upload_grace',
  'upload_rate',
  'trust_alpha',
  'trust_threshold',
  'trust_warmup',
  'trust_tolerance',
  'root_memoir',
  'lora_fair_lambda',
  'lora_fair_lr',
  'lora_fair_steps',
  'lora_fair_solver',
  'server_lr',
];

export interface ServeResult {
  url: string;
  stopped_at: string;
}

/**
 * `kourai council serve`: runs until SIGINT/SIGTERM, then stops accepting, lets in-flight requests
 * and the aggregation step in progress finish, and closes the database. Logs go to stderr; with
 * --json, stdout carries NDJSON events ({"event":"listening",…} then {"event":"stopped",…}).
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ServeResult> {
    const flags = configFlags(opts, KEYS);
    if (opts.baseFingerprint.length) flags.base_fingerprints = opts.baseFingerprint;
    const resolved = resolveCouncilConfig(ctx, flags);
    checkServeConfig(resolved);
    const { config } = resolved;
    const log = (line: string): void => {
      logLine(ctx, `${ctx.now().toISOString()} ${line}`);
    };
    const threads = opts.threads ?? Math.min(availableParallelism(), 8);
    let server;
    try {
      // Aggregation runs in a worker thread, which keeps its own pairwise-distance pool of `threads`.
      server = await startCouncilServer({ config, log, threads, clock: clockFrom(ctx.now) });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new EnvironmentError(
          `port ${config.port} on ${config.host} is already in use (from ${resolved.sources.port})`,
          'pick another with --port, or stop the other council',
        );
      if (code === 'EACCES')
        throw new EnvironmentError(
          `not allowed to listen on ${config.host}:${config.port}`,
          'use a port above 1023, or put a reverse proxy in front',
        );
      throw err;
    }
    log(
      `council listening on ${server.url} — strategy ${config.strategy}${config.byzantine ? ` (f=${config.byzantine})` : ''}, ` +
        `min ${config.min_forges} forges, deadline ${config.round_deadline}s, data ${describeLocation(config)}${config.cohort ? `, cohort ${config.cohort}` : ''}${resolved.file ? `, config ${resolved.file}` : ''}`,
    );
    const d = privacyPolicyOf(config).derivation;
    if (d)
      log(
        `council: privacy σ = ${d.binding === 'floor' ? d.floor_sigma.toPrecision(4) : d.observer_sigma.toPrecision(4)} for ε ${d.target_epsilon} over ${d.rounds} rounds at δ = ${d.delta} (q = ${d.sample_rate}): ` +
          (d.binding === 'floor'
            ? `raised from ${d.observer_sigma.toPrecision(4)} so that one release costs a forge ε ${d.release_epsilon.toFixed(3)} ≤ ${d.release_cap} (1/8 of its lifetime ε ${d.agent_epsilon})`
            : `one release costs a forge ε ${d.release_epsilon.toFixed(3)}, within ${d.release_cap} (1/8 of its lifetime ε ${d.agent_epsilon})`),
      );
    if (config.host !== '127.0.0.1' && config.host !== 'localhost' && config.host !== '::1')
      log('council: plain HTTP on a non-loopback address: terminate TLS in a reverse proxy in front of the council');
    if (opts.ndjson || opts.json)
      writeNdjson(ctx.stdout, { event: 'listening', url: server.url, port: server.port, data_dir: config.data_dir });
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    log('council: stopping — finishing in-flight requests and the aggregation step in progress');
    await server.close();
    const stopped = { url: server.url, stopped_at: ctx.now().toISOString() };
    if (opts.ndjson || opts.json) writeNdjson(ctx.stdout, { event: 'stopped', ...stopped });
    log('council: stopped');
    return stopped;
  },
  streams: () => true,
  service: true,
  render: () => '',
});
