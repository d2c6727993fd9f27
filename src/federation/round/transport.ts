/**
 * What a federation round needs from a council, as a small interface: the HTTP client
 * (`httpTransport`, CouncilClient underneath) or any other carrier (the simulation's council
 * port; a council in the same process in the tests), so a round runs without sockets or timers.
 */
import type { CouncilRelease } from '../../privacy/release.js';
import { CouncilClient, type AdapterExpectation, type DownloadedAdapter } from '../council-client.js';
import type { Health, Me, Receipt, RoundStatus, SealReceipt, Trust } from '../../protocol/wire.js';
import { redactError } from './membership.js';

export interface CouncilTransport {
  /** Where the council is, for messages (never carries the token). */
  readonly where: string;
  health(): Promise<Health>;
  me(): Promise<Me>;
  currentRound(): Promise<RoundStatus>;
  round(round: number): Promise<RoundStatus>;
  /** The newest global council adapter of an agent (round 0, the public initialisation, before any aggregate); null when the council holds none for it. */
  globalAdapter(agent: string, expect?: AdapterExpectation): Promise<DownloadedAdapter | null>;
  /** `expect`: the forge's own layout for the agent (bounds what is read; the round checks it again). */
  aggregate(round: number, agent: string, expect?: AdapterExpectation): Promise<DownloadedAdapter>;
  /** Sends a release document as it is. Idempotent on the council: a replay gets the same receipt. */
  submitRelease(round: number, release: CouncilRelease): Promise<Receipt>;
  seal(round: number): Promise<SealReceipt>;
  trust(): Promise<Trust>;
}

export interface HttpTransportOptions {
  timeoutMs?: number;
  retries?: number;
  backoffMs?: number;
  /** How releases travel: the JSON document (default) or the same release as a safetensors body. */
  encoding?: 'json' | 'safetensors';
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /** Internal retries of one request stop once its first failure is this old. */
  retryForMs?: number;
  /** Progress while a request waits (a line for stderr). */
  onWait?: (line: string) => void;
  waitNoticeMs?: number;
}

/** The council over HTTP. Every error leaves here with the token removed from its text. */
export function httpTransport(url: string, token: string, opts: HttpTransportOptions = {}): CouncilTransport {
  const client = new CouncilClient({
    url,
    token,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.retries !== undefined ? { retries: opts.retries } : {}),
    ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.retryForMs !== undefined ? { retryForMs: opts.retryForMs } : {}),
    ...(opts.onWait ? { onWait: opts.onWait } : {}),
    ...(opts.waitNoticeMs !== undefined ? { waitNoticeMs: opts.waitNoticeMs } : {}),
  });
  const safe = async <T>(p: () => Promise<T>): Promise<T> => {
    try {
      return await p();
    } catch (err) {
      throw redactError(err, token);
    }
  };
  return {
    where: url,
    health: () => safe(() => client.health()),
    me: () => safe(() => client.me()),
    currentRound: () => safe(() => client.currentRound()),
    round: (n) => safe(() => client.round(n)),
    globalAdapter: (agent, expect) => safe(() => client.globalAdapter(agent, expect)),
    aggregate: (n, agent, expect) => safe(() => client.aggregate(n, agent, expect)),
    submitRelease: (n, release) => safe(() => client.submitRelease(n, release, { encoding: opts.encoding ?? 'json' })),
    seal: (n) => safe(() => client.seal(n)),
    trust: () => safe(() => client.trust()),
  };
}
