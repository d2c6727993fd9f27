import { randomBytes } from 'node:crypto';
import type { Client as PgClient } from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { CouncilConfig } from '../../src/council/config.js';
import { computeAgentAggregate, type AgentAggregator } from '../../src/council/aggregate-round.js';
import { Council } from '../../src/council/council.js';
import { addForge } from '../../src/council/forges.js';
import { openCouncilStorage } from '../../src/council/open-storage.js';
import type { CouncilStorage, ForgeRow } from '../../src/council/storage.js';
import { VirtualClock, type Clock } from '../../src/runtime/clock.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { BACKENDS, body, testDatabase, update, useBackend, testConfig } from './helpers.js';

/**
 * Council.idle() against closes it did not start itself: a deadline found by the sweep, and on
 * PostgreSQL a closer that lost the race to close (it keeps the round row locked until its
 * transaction ends). idle() must not return while a closed round still waits for its aggregation.
 */

const START = Date.UTC(2026, 0, 1);
const DEADLINE_MS = 3600_000;

/** Time that moves without firing timers: the deadline is found by whoever looks next (the sweep). */
class SilentClock implements Clock {
  t = START;
  now(): Date {
    return new Date(this.t);
  }
  setTimer(): { cancel(): void } {
    return { cancel: () => undefined };
  }
}

/**
 * The storage with each call to `key` held after it returns, before its caller sees the result
 * (for closeRound: "closed, aggregation not yet queued"). Only while `armed`.
 */
function holding<K extends keyof CouncilStorage>(
  inner: CouncilStorage,
  key: K,
): { storage: CouncilStorage; written: Promise<void>; release(): void; armed: boolean } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let wrote!: () => void;
  const written = new Promise<void>((r) => (wrote = r));
  const held = { storage: inner, written, release, armed: true };
  held.storage = new Proxy(inner, {
    get(target, k) {
      const v: unknown = Reflect.get(target, k, target);
      if (typeof v !== 'function') return v;
      const fn = (v as (...a: unknown[]) => unknown).bind(target);
      if (k !== key) return fn;
      return async (...args: unknown[]) => {
        const out = await fn(...args);
        if (held.armed) {
          wrote();
          await gate;
        }
        return out;
      };
    },
  });
  return held;
}

function holdingCloses(inner: CouncilStorage): ReturnType<typeof holding> {
  return holding(inner, 'closeRound');
}

/** The storage recording each aggregation claim as it is asked for. */
function countingClaims(inner: CouncilStorage, claims: number[]): CouncilStorage {
  return new Proxy(inner, {
    get(target, k) {
      const v: unknown = Reflect.get(target, k, target);
      if (typeof v !== 'function') return v;
      const fn = (v as (...a: unknown[]) => unknown).bind(target);
      if (k !== 'claimRound') return fn;
      return (...args: Parameters<CouncilStorage['claimRound']>) => {
        claims.push(args[0]);
        return fn(...args);
      };
    },
  });
}

interface Setup {
  council: Council;
  inner: CouncilStorage;
  config: CouncilConfig;
  logs: string[];
  database: string | null;
  dir: string;
  forge: ForgeRow;
}

let open: Setup | undefined;
afterEach(async () => {
  if (!open) return;
  await open.council.stop();
  await open.inner.close();
  removeDir(open.dir);
  open = undefined;
});

/** A council on the current backend with one update in round 1 (of three forges needed to close early). */
async function setup(
  clock: Clock,
  opts: {
    wrap?: (s: CouncilStorage) => CouncilStorage;
    aggregator?: (deps: { storage: CouncilStorage; config: CouncilConfig }) => AgentAggregator;
  } = {},
): Promise<Setup> {
  const dir = tempDir('kourai-idle-');
  const config = testConfig(dir, { round_deadline: DEADLINE_MS / 1000 });
  const database = await testDatabase();
  const inner = await openCouncilStorage({ ...config, database }, 'create');
  const storage = opts.wrap ? opts.wrap(inner) : inner;
  const logs: string[] = [];
  const council = new Council({
    storage,
    config,
    clock,
    log: (l) => logs.push(l),
    ...(opts.aggregator ? { aggregator: opts.aggregator({ storage, config }) } : {}),
  });
  await council.start();
  const { forge } = await addForge(inner, 'athens', randomBytes, clock.now());
  await council.submit(forge, 1, 'metis', body(update(1)));
  return (open = { council, inner, config, logs, database, dir, forge });
}

/** Lets pending I/O callbacks and the work they start run for a while. */
async function turns(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/** True once `p` has settled (checked after letting pending I/O callbacks run). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await turns();
  return done;
}

/** The council started again on its storage, as after a stop (`t` takes the new council and storage). */
async function restart(t: Setup, clock: Clock): Promise<Council> {
  t.inner = await openCouncilStorage({ ...t.config, database: t.database }, 'create');
  t.council = new Council({ storage: t.inner, config: t.config, clock, log: (l) => t.logs.push(l) });
  await t.council.start();
  return t.council;
}

async function pgClient(url: string): Promise<PgClient> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

/** Backends of this database waiting for a lock (the council's pool included). */
async function lockWaits(watch: PgClient): Promise<number> {
  return (
    await watch.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    )
  ).rows[0]!.n;
}

/** Polls `ok` for up to 5 s; false when it never held. */
async function within5s(ok: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    if (await ok()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return ok();
}

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);

    it('idle() waits for a round the sweep closed until its aggregation has opened the next round', async () => {
      const clock = new SilentClock();
      let held!: ReturnType<typeof holdingCloses>;
      const t = await setup(clock, { wrap: (s) => (held = holdingCloses(s)).storage });
      clock.t = START + DEADLINE_MS;
      const sweep = t.council.sweep();
      await held.written;
      expect((await t.inner.round(1))?.state).toBe('closing');
      const idle = t.council.idle();
      const early = await settled(idle);
      held.release();
      await sweep;
      await idle;
      expect(early, 'idle() returned while the closed round had no aggregation queued').toBe(false);
      expect((await t.inner.round(1))?.state).toBe('aggregated');
      expect((await t.inner.latestRound())?.round).toBe(2);
    });

    it('idle() after the deadline timer fired: the round it closed is aggregated', async () => {
      const clock = new VirtualClock(START);
      let held!: ReturnType<typeof holdingCloses>;
      const t = await setup(clock, { wrap: (s) => (held = holdingCloses(s)).storage });
      clock.advance(DEADLINE_MS);
      const idle = t.council.idle();
      await held.written;
      const early = await settled(idle);
      held.release();
      await idle;
      expect(early, 'idle() returned while the timer-closed round had no aggregation queued').toBe(false);
      expect((await t.inner.round(1))?.state).toBe('aggregated');
      expect((await t.inner.latestRound())?.round).toBe(2);
    });

    it('stop() waits for a close in progress and starts no aggregation once it has begun; the next start aggregates the round', async () => {
      const clock = new SilentClock();
      const claims: number[] = [];
      let held!: ReturnType<typeof holding>;
      const t = await setup(clock, { wrap: (s) => (held = holdingCloses(countingClaims(s, claims))).storage });
      clock.t = START + DEADLINE_MS;
      const sweep = t.council.sweep();
      await held.written;
      const stop = t.council.stop();
      const early = await settled(stop);
      held.release();
      await sweep;
      await stop;
      // What the server does once stop() has returned.
      await t.inner.close();
      await turns();
      expect(early, 'stop() returned while a close was in progress').toBe(false);
      expect(claims, 'an aggregation started after stop() began').toEqual([]);
      expect(t.logs.filter((l) => /failed/.test(l))).toEqual([]);
      expect(t.logs).toContain(
        'council: round 1 closed (deadline); the council is stopping: the next start aggregates it',
      );
      await (await restart(t, clock)).idle();
      expect((await t.inner.round(1))?.state).toBe('aggregated');
      expect((await t.inner.latestRound())?.round).toBe(2);
    });

    it('a seal whose close comes after stop() changes no round and writes nothing more; the next start closes the round', async () => {
      const clock = new SilentClock();
      const claims: number[] = [];
      let held!: ReturnType<typeof holding>;
      const t = await setup(clock, {
        wrap: (s) => {
          held = holding(countingClaims(s, claims), 'forgeCounts');
          held.armed = false;
          return held.storage;
        },
      });
      const [second, third] = await Promise.all(
        ['byzantium', 'corinth'].map(async (n) => (await addForge(t.inner, n, randomBytes, clock.now())).forge),
      );
      // A seal counts toward min_forges with an update of its forge's.
      for (const [i, f] of [second!, third!].entries()) await t.council.submit(f, 1, 'metis', body(update(i + 2)));
      await t.council.seal(t.forge, 1);
      await t.council.seal(second!, 1);
      held.armed = true;
      const sealing = t.council.seal(third!, 1);
      // The third seal is recorded and counted: the close comes next.
      await held.written;
      await t.council.stop();
      await t.inner.close();
      held.release();
      expect((await sealing).forge).toBe('corinth');
      await turns();
      expect(claims, 'an aggregation started after stop()').toEqual([]);
      await (await restart(t, clock)).idle();
      expect(t.logs).toContain('council: round 1 closed (3 forges sealed); aggregating');
      expect((await t.inner.round(1))?.state).toBe('aggregated');
      expect((await t.inner.latestRound())?.round).toBe(2);
    });

    // Row locks are a PostgreSQL matter: SQLite runs one writer at a time.
    if (backend === 'postgres') {
      it('a closer that lost the race keeps the round row locked; the aggregation waits for it instead of giving up', async () => {
        const clock = new VirtualClock(START);
        const t = await setup(clock);
        const [sealer, rival, watch] = await Promise.all([1, 2, 3].map(() => pgClient(t.database as string)));
        try {
          // A seal checking the round holds its row FOR SHARE: the timer-started close waits for it.
          await sealer!.query('BEGIN');
          await sealer!.query('SELECT state FROM rounds WHERE round = 1 FOR SHARE');
          clock.advance(DEADLINE_MS);
          expect(await within5s(async () => (await lockWaits(watch!)) === 1), 'the close waits for the row').toBe(true);
          // A second closer (a request, another process) queues behind it.
          await rival!.query('BEGIN');
          const lost = rival!.query("UPDATE rounds SET state = 'closing' WHERE round = 1 AND state = 'open'");
          expect(await within5s(async () => (await lockWaits(watch!)) === 2), 'the rival waits too').toBe(true);
          await sealer!.query('COMMIT');
          // The council closed the round; the rival found it closed, changed nothing, and holds the row until it ends.
          expect((await lost).rowCount).toBe(0);
          const idle = t.council.idle();
          // The aggregation's claim waits for the rival (or, wrongly, gives up and idle() returns).
          await within5s(async () => (await lockWaits(watch!)) === 1 || (await settled(idle)));
          const early = await settled(idle);
          await rival!.query('COMMIT');
          await idle;
          expect(early, 'the aggregation gave up on a row a finished closer held').toBe(false);
          expect((await t.inner.round(1))?.state).toBe('aggregated');
          expect((await t.inner.latestRound())?.round).toBe(2);
        } finally {
          await Promise.all([sealer, rival, watch].map((c) => c!.end()));
        }
      });

      it('renewing the aggregation claim while the round row is briefly held does not give the round up', async () => {
        const clock = new VirtualClock(START);
        const db: { holder?: PgClient; watch?: PgClient } = {};
        const t = await setup(clock, {
          aggregator:
            ({ storage, config }) =>
            async (round, agent, settings) => {
              // Mid-aggregation, an insert referring to the round (as recording an aggregate does)
              // holds its row FOR KEY SHARE just as the lease renewal comes due.
              await db.holder!.query('BEGIN');
              await db.holder!.query('SELECT 1 FROM rounds WHERE round = $1 FOR KEY SHARE', [round]);
              clock.advance((config.aggregation_lease * 1000) / 3);
              // The renewal waits for the row (or, wrongly, has already given the claim up).
              await within5s(async () => (await lockWaits(db.watch!)) === 1);
              await db.holder!.query('COMMIT');
              return computeAgentAggregate(
                { storage, now: () => clock.now(), trustTolerance: config.trust_tolerance },
                round,
                agent,
                settings,
              );
            },
        });
        [db.holder, db.watch] = await Promise.all([1, 2].map(() => pgClient(t.database as string)));
        try {
          clock.advance(DEADLINE_MS);
          await t.council.idle();
          expect(t.logs.filter((l) => /another process took over/.test(l))).toEqual([]);
          expect((await t.inner.round(1))?.state).toBe('aggregated');
          expect((await t.inner.latestRound())?.round).toBe(2);
        } finally {
          await Promise.all([db.holder, db.watch].map((c) => c!.end()));
        }
      });
    }
  });
}
