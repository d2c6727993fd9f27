import type { Layout } from '../tensor/layout.js';
import type { Vec } from '../aggregation/vec.js';

/**
 * Everything the council keeps, behind one interface. The SQLite implementation
 * (sqlite-storage.ts) serves a single council process; the PostgreSQL one (pg-storage.ts) serves
 * any number of processes behind a load balancer, because every state change the council makes
 * is one call here that must be atomic, and every such call is conditional:
 *
 * - `insertSubmission` is all-or-nothing (an upload that fails or is cut off leaves no row) and
 *   refuses a second row for (round, forge, agent) by returning the existing one (the caller
 *   compares digests: same → replay, else 409);
 * - `closeRound` changes only an open round (one closer wins);
 * - `recordAggregate` inserts the (round, agent) result once (a second writer is ignored);
 * - `finishRound` applies trust, exile and the next round only if the round is still closing;
 * - `adoptLayout` changes an agent's layout from a round on, dropping that agent's updates of the
 *   rounds not yet aggregated (they are in the old layout), in one transaction;
 * - `claimRound` gives one process at a time the right to aggregate a closing round, for a lease
 *   it renews between agents; a process that dies stops renewing, and another claims the round
 *   when the lease has run out (`recordAggregate` and `finishRound` stay idempotent meanwhile).
 *
 * Stored update and global data carry per-chunk sha256 digests: `damagedSubmissions` finds
 * updates whose bytes changed after they were accepted (they are left out of aggregation), and
 * reading a damaged global throws DamagedStateError instead of returning wrong values.
 *
 * Methods are async for the sake of networked backends. The one exception is `chunkReader`:
 * aggregation pulls chunks synchronously (the driver in src/aggregation is synchronous and
 * CPU-bound); a networked backend spools an agent's chunks locally before handing out a reader.
 */

export interface ForgeRow {
  id: number;
  name: string;
  /** sha256 of the token (tokens are 256-bit random secrets: a fast hash is enough). */
  tokenHash: Buffer;
  createdAt: string;
  trust: number;
  roundsScored: number;
  exiledAt: string | null;
  exiledRound: number | null;
  /** When the operator revoked the forge's token (`kourai council forge revoke`). */
  revokedAt: string | null;
}

export type RoundState = 'open' | 'closing' | 'aggregated';

export interface RoundRow {
  round: number;
  state: RoundState;
  openedAt: string;
  deadline: string;
  closedAt: string | null;
  closeReason: 'min_forges' | 'deadline' | null;
  aggregatedAt: string | null;
  /** The aggregation settings frozen when the round opened (JSON). */
  strategyJson: string;
  /** The forges sampled for the round (names, sorted), or null when every forge takes part. */
  cohort: string[] | null;
}

export interface SubmissionRow {
  id: number;
  round: number;
  forgeId: number;
  agent: string;
  digest: string;
  baseFingerprint: string;
  clipNorm: number;
  noiseMultiplier: number;
  weight: number | null;
  norm: number;
  coords: number;
  receivedAt: string;
  /** The exact answer given when it was accepted (replayed verbatim to retries). */
  receiptJson: string;
}

/** One storage chunk of an update: float32 little-endian bytes of chunkRanges(layout)[index]. */
export interface StoredChunk {
  index: number;
  data: Buffer;
}

/** What is known of a submission only once its whole body has been read and checked. */
type SubmissionFields = Omit<SubmissionRow, 'id' | 'round' | 'forgeId' | 'agent'>;

/**
 * An update being uploaded. Storage writes each chunk as it comes (never holding the update
 * whole where the backend allows it: PostgreSQL inside the transaction that `complete` ends),
 * then asks `complete` for the row; if reading the body or `complete` fails, nothing is kept.
 */
export interface NewSubmission {
  round: number;
  forgeId: number;
  agent: string;
  /** The layout the update is read against: it must still be the agent's layout for the round. */
  layout: Layout;
  /** Every chunk of the layout once, in any order, as the body arrives. */
  chunks: AsyncIterable<StoredChunk>;
  /** Checks what needs the whole update; `stored` reads back a chunk already written. */
  complete(stored: (index: number) => Promise<Buffer>): Promise<SubmissionFields>;
}

/** One layout an agent has had: in force for rounds ≥ sinceRound (until a later one). */
export interface LayoutRecord {
  agent: string;
  sinceRound: number;
  layout: Layout;
  setAt: string;
  /** Why: 'configuration', 'reset by the operator', … */
  source: string;
}

export interface AggregateRow {
  round: number;
  agent: string;
  /** false when the agent was skipped (e.g. too few updates): its global is unchanged. */
  updated: boolean;
  outcomeJson: string;
  recordedAt: string;
}

export interface ScoreRow {
  round: number;
  forgeId: number;
  agent: string;
  /** Squared distance of the forge's update to the aggregate update. */
  distance2: number;
  /** Bounded similarity in [0, 1] derived from it (see trust.ts). */
  similarity: number;
  used: boolean;
}

export interface TrustUpdate {
  forgeId: number;
  similarity: number;
  before: number;
  after: number;
  /** Exile the forge now (the Stoa Falls). */
  exile: boolean;
  /** What its updates showed this round beyond their distance (trust.ts): recorded with an exile. */
  evidence?: string[];
}

export interface EventRow {
  id: number;
  at: string;
  round: number | null;
  forgeId: number | null;
  kind: string;
  detailJson: string;
}

export interface NewRound {
  round: number;
  openedAt: string;
  deadline: string;
  strategyJson: string;
  cohort: string[] | null;
}

/** One running `council serve` process, as it last reported itself. */
export interface ProcessRow {
  /** Unique per process start (host, pid and a random suffix). */
  id: string;
  host: string;
  pid: number;
  url: string;
  startedAt: string;
  heartbeatAt: string;
  /** What it is doing: 'serving', or 'aggregating round N'. */
  role: string;
  /** The settings every process of one council must share (council-policy.ts), as JSON. */
  policyJson: string;
}

/** Where the state lives, for health and logs (never a password). */
export interface StorageInfo {
  backend: 'sqlite' | 'postgres';
  /** The file, or the database URL without its password. */
  location: string;
}

/** Synchronous reads of one (round, agent)'s updates, coordinates [start, end) of each. */
export interface ChunkReader {
  readonly n: number;
  read(start: number, end: number): Vec[];
  /** The previous global adapter of the agent, if any (the updates are deltas from it). */
  base: ((start: number, end: number) => Vec) | undefined;
  close(): void;
}

export interface CouncilStorage {
  // forges
  /** Inserts a forge; its token hash depends on the new id (tokens embed it), so it is computed inside the transaction. */
  addForge(name: string, createdAt: string, tokenHashFor: (id: number) => Buffer): Promise<ForgeRow>;
  forgeById(id: number): Promise<ForgeRow | undefined>;
  forgeByName(name: string): Promise<ForgeRow | undefined>;
  listForges(): Promise<ForgeRow[]>;
  /** The forge a token hash belongs to (lookup by the whole secret's hash: ids cannot be probed). */
  forgeByTokenHash(hash: Buffer): Promise<ForgeRow | undefined>;
  /** A new token hash for the forge (the old token stops working); also lifts a revocation. */
  setForgeToken(forgeId: number, tokenHash: Buffer, at: string): Promise<void>;
  revokeForge(forgeId: number, at: string): Promise<void>;
  /** Accepted updates per forge and the time of the newest. */
  forgeActivity(): Promise<Map<number, { submissions: number; lastAt: string | null }>>;

  // rounds
  latestRound(): Promise<RoundRow | undefined>;
  round(round: number): Promise<RoundRow | undefined>;
  listRounds(limit: number): Promise<RoundRow[]>;
  /** Rounds left `closing` by a crash (aggregation must resume). */
  closingRounds(): Promise<RoundRow[]>;
  openRound(r: NewRound): Promise<void>;
  /** Extends an open round with no updates; `cohort` (when given) replaces its cohort (forges may have joined meanwhile). */
  extendDeadline(round: number, deadline: string, at: string, cohort?: string[] | null): Promise<void>;
  /** open → closing; false if the round was not open. */
  closeRound(round: number, at: string, reason: 'min_forges' | 'deadline'): Promise<boolean>;
  /**
   * Claims (or renews) the right to aggregate a closing round until `leaseUntil`: true when the
   * round is closing and unclaimed, claimed by `owner`, or its lease ran out before `at`.
   */
  claimRound(round: number, owner: string, at: string, leaseUntil: string): Promise<boolean>;

  // layouts and submissions
  /** The agent's layout in force for `round` (default: the newest). */
  agentLayout(agent: string, round?: number): Promise<Layout | undefined>;
  /** Every layout the agent has had, oldest first. */
  layoutHistory(agent: string): Promise<LayoutRecord[]>;
  /**
   * Makes `layout` the agent's layout from `sinceRound` on (null: the agent has none from then on).
   * Updates of that agent in rounds ≥ sinceRound that are not aggregated yet are deleted (they
   * are in the old layout); returns which.
   */
  adoptLayout(
    agent: string,
    layout: Layout | null,
    sinceRound: number,
    at: string,
    source: string,
  ): Promise<{ removed: { round: number; forgeId: number }[] }>;
  submission(round: number, forgeId: number, agent: string): Promise<SubmissionRow | undefined>;
  /** Inserts atomically as the chunks arrive; if the slot is taken returns the existing row instead (nothing kept). */
  insertSubmission(
    s: NewSubmission,
  ): Promise<{ inserted: true; row: SubmissionRow } | { inserted: false; row: SubmissionRow }>;
  submissionsFor(round: number, agent: string): Promise<SubmissionRow[]>;
  submittedAgents(round: number, forgeId: number): Promise<string[]>;
  /** Agents with at least one submission in the round. */
  agentsWithSubmissions(round: number): Promise<string[]>;
  forgeCounts(round: number): Promise<{ submitted: number; sealed: number }>;
  seal(round: number, forgeId: number, at: string): Promise<{ sealedAt: string }>;
  sealOf(round: number, forgeId: number): Promise<string | undefined>;
  /** Submissions whose stored bytes no longer match their digests (with the first bad chunk). */
  damagedSubmissions(submissions: readonly SubmissionRow[]): Promise<{ id: number; chunk: number }[]>;
  /** A reader over the given submissions (ordered as given) and the agent's global before `round`. */
  chunkReader(
    submissions: readonly SubmissionRow[],
    layout: Layout,
    agent: string,
    round: number,
  ): Promise<ChunkReader>;

  // aggregates, globals, trust
  aggregateOf(round: number, agent: string): Promise<AggregateRow | undefined>;
  aggregatesOf(round: number): Promise<AggregateRow[]>;
  /** Inserts once (ignored if present); `globalChunks` = the new global adapter, float32 LE chunks. */
  recordAggregate(row: AggregateRow, globalChunks: Buffer[] | null, scores: ScoreRow[]): Promise<void>;
  /**
   * The newest global adapter of an agent produced by a round < `beforeRound` (default: any) in the
   * layout in force at `beforeRound` (a layout change retires the globals before it).
   */
  globalOf(agent: string, beforeRound?: number): Promise<{ round: number; strategy: string } | undefined>;
  globalChunks(round: number, agent: string): Promise<Buffer[]>;
  scoresFor(round: number): Promise<ScoreRow[]>;
  /** closing → aggregated, trust updates, exiles, events and the next round, in one transaction. */
  finishRound(round: number, at: string, updates: TrustUpdate[], next: NewRound | null): Promise<boolean>;
  trustHistory(forgeId: number): Promise<{ round: number; similarity: number; trust: number }[]>;

  // events
  recordEvent(e: Omit<EventRow, 'id'>): Promise<void>;
  events(limit: number): Promise<EventRow[]>;

  // the council's own settings (the cohort seed, the policy every process must share)
  /** Stores `value` under `key` unless one is there already; returns the stored value either way. */
  settingOnce(key: string, value: Buffer): Promise<Buffer>;
  setting(key: string): Promise<Buffer | undefined>;

  // processes
  heartbeat(p: ProcessRow): Promise<void>;
  /** Processes that reported since `since`, newest first. */
  processes(since: string): Promise<ProcessRow[]>;
  removeProcess(id: string): Promise<void>;

  info(): StorageInfo;
  close(): Promise<void>;
}

/** insertSubmission / seal: the round stopped accepting (closed meanwhile): answer late_submission. */
export class RoundNotOpenError extends Error {
  constructor(readonly round: number) {
    super(`round ${round} is not open`);
    this.name = 'RoundNotOpenError';
  }
}

/** insertSubmission: the agent's layout changed (an operator reset) between the check and the insert. */
export class LayoutChangedError extends Error {
  constructor(readonly agent: string) {
    super(`the ${agent} layout changed meanwhile`);
    this.name = 'LayoutChangedError';
  }
}

/** Stored state whose bytes do not match their digest: never served, never aggregated. */
export class DamagedStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DamagedStateError';
  }
}

/** The database cannot be reached now (PostgreSQL restarting, network): answered 503, retried by forges. */
export class StorageUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageUnavailableError';
  }
}
