import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { CouncilConfig } from '../../src/council/config.js';
import { Council } from '../../src/council/council.js';
import { addForge } from '../../src/council/forges.js';
import { openCouncilStorage } from '../../src/council/open-storage.js';
import type { CouncilStorage, ForgeRow } from '../../src/council/storage.js';
import { privacyPolicyOf } from '../../src/council/round-settings.js';
import { roundListView } from '../../src/council/views.js';
import roundsCommand from '../../src/commands/council/rounds.js';
import type { Ctx } from '../../src/context.js';
import { VirtualClock } from '../../src/runtime/clock.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { BACKENDS, body, testDatabase, update, useBackend, testConfig } from './helpers.js';

/** A council driven directly (no HTTP, no real timers), as the simulator drives it. */
async function council(over: Partial<CouncilConfig> = {}): Promise<{
  council: Council;
  storage: CouncilStorage;
  clock: VirtualClock;
  forges: ForgeRow[];
  logs: string[];
  dir: string;
  config: CouncilConfig;
}> {
  const dir = tempDir('kourai-lifecycle-');
  const config = testConfig(dir, { round_deadline: 3600, ...over });
  const storage = await openCouncilStorage({ ...config, database: await testDatabase() }, 'create');
  const clock = new VirtualClock(Date.UTC(2026, 0, 1));
  const logs: string[] = [];
  const c = new Council({ storage, config, clock, log: (l) => logs.push(l) });
  await c.start();
  const forges = [];
  for (const name of ['athens', 'sparta', 'thebes'])
    forges.push((await addForge(storage, name, randomBytes, clock.now())).forge);
  return { council: c, storage, clock, forges, logs, dir, config };
}

let open: { council: Council; storage: CouncilStorage; dir: string } | undefined;
afterEach(async () => {
  if (!open) return;
  await open.council.stop();
  await open.storage.close();
  removeDir(open.dir);
  open = undefined;
});

/** Lets timer callbacks (which start async work) run to completion. */
async function settle(c: Council): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  await c.idle();
}

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);

    describe('the round lifecycle on a virtual clock', () => {
      it('an empty round is extended at its deadline; a round with updates closes at its deadline and aggregates', async () => {
        const t = (open = await council());
        expect((await t.storage.latestRound())?.deadline).toBe('2026-01-01T01:00:00.000Z');
        t.clock.advance(3600_000 - 1);
        await settle(t.council);
        expect((await t.storage.events(10)).map((e) => e.kind)).not.toContain('round_extended');
        t.clock.advance(1);
        await settle(t.council);
        expect((await t.storage.latestRound())?.deadline).toBe('2026-01-01T02:00:00.000Z');
        expect((await t.storage.events(10)).map((e) => e.kind)).toContain('round_extended');

        await t.council.submit(t.forges[0]!, 1, 'metis', body(update(1)));
        t.clock.advance(3600_000);
        await settle(t.council);
        const [round2, round1] = await roundListView(t.storage, 5, privacyPolicyOf(t.config));
        expect(round1).toMatchObject({
          round: 1,
          state: 'aggregated',
          close_reason: 'deadline',
          closed_at: '2026-01-01T02:00:00.000Z',
          agents: [{ agent: 'metis', aggregated: true, used: 1 }],
        });
        expect(round2).toMatchObject({
          round: 2,
          state: 'open',
          opened_at: '2026-01-01T02:00:00.000Z',
          deadline: '2026-01-01T03:00:00.000Z',
        });
        // Late for round 1 now, in virtual time.
        await expect(t.council.submit(t.forges[1]!, 1, 'metis', body(update(2)))).rejects.toMatchObject({
          code: 'late_submission',
        });
      });

      it('closes as soon as min_forges have sealed, without any time passing', async () => {
        const t = (open = await council());
        for (const [i, f] of t.forges.entries()) {
          await t.council.submit(f, 1, 'kallos', body(update(10 + i)));
          await t.council.seal(f, 1);
        }
        await settle(t.council);
        expect(await roundListView(t.storage, 1, privacyPolicyOf(t.config))).toMatchObject([
          { round: 2, state: 'open', opened_at: '2026-01-01T00:00:00.000Z' },
        ]);
        const status = await t.council.roundStatus(t.forges[0]!, 1);
        expect(status).toMatchObject({
          state: 'aggregated',
          close_reason: 'min_forges',
          outcomes: [{ agent: 'kallos', updates: 3, used: 3, yours_used: true }],
        });
      });
    });

    describe('echoes', () => {
      it('identical updates count once in the robust rule, and the round says so', async () => {
        const specs = [
          { name: 'layers.0.q_proj.lora_A.weight', shape: [4, 64] },
          { name: 'layers.0.q_proj.lora_B.weight', shape: [64, 4] },
        ];
        const t = (open = await council({
          strategy: 'multikrum',
          byzantine: 2,
          min_forges: 7,
          layouts: { '*': specs },
        }));
        for (const name of ['argos', 'twin-a', 'twin-b', 'twin-c'])
          t.forges.push((await addForge(t.storage, name, randomBytes, t.clock.now())).forge);
        for (const [i, f] of t.forges.entries()) {
          const opts = { specs, centre: 0.01, spread: 0.03 };
          const u = f.name.startsWith('twin') ? update(99, opts) : update(10 + i, opts);
          await t.council.submit(f, 1, 'kallos', body(u));
          await t.council.seal(f, 1);
        }
        await settle(t.council);
        const [, round1] = await roundListView(t.storage, 2, privacyPolicyOf(t.config));
        expect(round1?.agents).toMatchObject([
          { agent: 'kallos', aggregated: true, echoes: [['twin-a', 'twin-b', 'twin-c']] },
        ]);
        const outcome = JSON.parse((await t.storage.aggregatesOf(1))[0]!.outcomeJson);
        expect(outcome.used.filter((n: string) => n.startsWith('twin')).length).toBeLessThanOrEqual(1);
        expect(outcome.details.evidence).toEqual({ 'twin-a': 'echo', 'twin-b': 'echo', 'twin-c': 'echo' });
        expect(t.logs).toContain('council: round 1: kallos: 3 identical updates (twin-a, twin-b, twin-c) counted once');
        const text = roundsCommand.render?.({ data_dir: '', rounds: [round1!] }, { colorLevel: 0 } as Ctx) ?? '';
        expect(text).toMatch(/round 1, kallos: 3 identical updates counted once \(twin-a, twin-b, twin-c\)/);
      });
    });

    describe('VirtualClock', () => {
      it('fires due timers in due-time order, each at its own time, and never early', () => {
        const c = new VirtualClock(0);
        const seen: [string, number][] = [];
        c.setTimer(30, () => seen.push(['c', c.now().getTime()]));
        c.setTimer(10, () => {
          seen.push(['a', c.now().getTime()]);
          c.setTimer(5, () => seen.push(['a+5', c.now().getTime()]));
        });
        const cancelled = c.setTimer(20, () => seen.push(['x', c.now().getTime()]));
        cancelled.cancel();
        c.advance(9);
        expect(seen).toEqual([]);
        c.advance(100);
        expect(seen).toEqual([
          ['a', 10],
          ['a+5', 15],
          ['c', 30],
        ]);
        expect(c.now().getTime()).toBe(109);
        expect(c.pending).toBe(0);
      });
    });
  });
}
