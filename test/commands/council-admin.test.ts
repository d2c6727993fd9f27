import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import forgeList from '../../src/commands/council/forge-list.js';
import forgeRevoke from '../../src/commands/council/forge-revoke.js';
import forgeRotate from '../../src/commands/council/forge-rotate.js';
import layoutReset from '../../src/commands/council/layout-reset.js';
import layoutShow from '../../src/commands/council/layout-show.js';
import migrate from '../../src/commands/council/migrate.js';
import status, { type StatusResult } from '../../src/commands/council/status.js';
import type { Command } from '../../src/commands/types.js';
import { authenticate } from '../../src/council/auth.js';
import { addForge } from '../../src/council/forges.js';
import { SqliteCouncilStorage } from '../../src/council/sqlite-storage.js';
import type { CouncilStorage } from '../../src/council/storage.js';
import { ExitCode } from '../../src/errors.js';
import { parseOptions } from '../../src/run-command.js';
import { layoutOf } from '../../src/tensor/layout.js';
import { body, call, SPECS, startTestCouncil, update, type TestCouncil } from '../council/helpers.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';

let c: TestCouncil | undefined;
let ctx: TestCtx | undefined;
afterEach(async () => {
  await c?.close();
  ctx?.cleanup();
  c = undefined;
  ctx = undefined;
});

async function run<R>(cmd: Command<never, R>, raw: Record<string, unknown>): Promise<R> {
  return cmd.run(parseOptions(cmd as never, raw) as never, ctx as TestCtx);
}

describe('kourai council forge list|revoke|rotate', () => {
  it('revoke refuses the token at once with 403 forge_revoked; rotate issues a new token, the old one is 401; list shows it all', async () => {
    c = await startTestCouncil();
    ctx = testCtx();
    const dataDir = c.config.data_dir;
    const athens = await c.token('athens');
    await c.token('sparta');
    expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', athens, body(update(1)))).status).toBe(201);

    const revoked = (await run(forgeRevoke as never, { name: 'athens', dataDir })) as {
      forge: string;
      revoked_at: string;
    };
    expect(revoked.forge).toBe('athens');
    const refused = await call(c.url, 'GET', '/v1/me', athens);
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({
      code: 'forge_revoked',
      message: expect.stringMatching(/the token of forge "athens" was revoked at/),
    });
    expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', athens, body(update(2)))).status).toBe(403);

    let list = (
      (await run(forgeList as never, { dataDir })) as {
        forges: { forge: string; status: string; updates: number; last_update: string | null }[];
      }
    ).forges;
    expect(list.map((f) => [f.forge, f.status, f.updates])).toEqual([
      ['athens', 'revoked', 1],
      ['sparta', 'active', 0],
    ]);
    expect(list[0]?.last_update).not.toBeNull();
    expect(forgeList.render?.({ data_dir: dataDir, forges: list } as never, ctx)).toMatch(
      /ID\s+FORGE\s+STATUS[\s\S]*athens\s+revoked/,
    );

    const rotated = (await run(forgeRotate as never, { name: 'athens', dataDir })) as { token: string };
    expect(rotated.token).toMatch(/^kourai_1_[A-Za-z0-9_-]{43}$/);
    expect(ctx.stderr.text).toMatch(/the new token is shown only now/);
    expect((await call(c.url, 'GET', '/v1/me', athens)).status).toBe(401);
    expect((await call(c.url, 'GET', '/v1/me', rotated.token)).json).toMatchObject({ forge: 'athens' });
    list = ((await run(forgeList as never, { dataDir })) as { forges: { forge: string; status: string }[] })
      .forges as never;
    expect(list[0]?.status).toBe('active');
    expect((await c.server.storage.events(20)).map((e) => e.kind)).toEqual(
      expect.arrayContaining(['forge_revoked', 'token_rotated']),
    );
    await expect(run(forgeRevoke as never, { name: 'nobody', dataDir })).rejects.toMatchObject({
      exitCode: ExitCode.notFound,
    });
    await expect(run(forgeList as never, { dataDir: join(dataDir, 'nowhere') })).rejects.toMatchObject({
      exitCode: ExitCode.notFound,
    });
  });
});

describe('authentication does not tell existing forge ids from missing ones', () => {
  it('a wrong token for an existing id and a token for a missing id take exactly the same storage path', async () => {
    c = await startTestCouncil();
    const real = await c.token('athens');
    const calls: string[][] = [];
    const spy = (label: string[]): CouncilStorage =>
      new Proxy(c!.server.storage, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver) as unknown;
          if (typeof v !== 'function') return v;
          return (...args: unknown[]) => {
            label.push(String(prop));
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    const existing = real.replace(/.{4}$/, 'AAAA');
    const missing = real.replace(/^kourai_1_/, 'kourai_99_');
    for (const token of [existing, missing]) {
      const seen: string[] = [];
      calls.push(seen);
      await expect(authenticate(spy(seen), `Bearer ${token}`)).rejects.toMatchObject({ code: 'unauthorized' });
    }
    expect(calls[0]).toEqual(['forgeByTokenHash']);
    expect(calls[1]).toEqual(calls[0]);
    expect(await authenticate(c.server.storage, `Bearer ${real}`)).toMatchObject({ name: 'athens' });
  });
});

describe('kourai council layout show|reset', () => {
  it('a layout in council.db that differs from the configuration stops the council from starting; reset adopts the configured one', async () => {
    ctx = testCtx();
    const dataDir = join(ctx.home, 'council');
    // A council.db whose aidos layout was fixed by a forge's junk update (what kourai did before).
    const storage = new SqliteCouncilStorage(dataDir);
    await addForge(storage, 'athens', randomBytes, new Date());
    await storage.openRound({
      round: 1,
      openedAt: new Date().toISOString(),
      deadline: new Date(Date.now() + 3.6e6).toISOString(),
      strategyJson: JSON.stringify({ strategy: 'fedavg', f: 0, weights: 'uniform' }),
      cohort: null,
    });
    await storage.adoptLayout(
      'aidos',
      layoutOf([{ name: 'junk', shape: [1] }]),
      1,
      new Date().toISOString(),
      'first accepted update (before layouts were configured)',
    );
    await storage.close();

    const layouts = JSON.stringify({ '*': SPECS });
    await expect(startTestCouncil({ data_dir: dataDir }, ctx.home)).rejects.toMatchObject({
      exitCode: ExitCode.conflict,
      message: expect.stringMatching(
        /the adapter layout in council\.db differs from the configuration for aidos \(council\.db: 1 tensor, 1 coordinates \(junk \[1\]\); configured: 2 tensors, 28 coordinates/,
      ),
      hint: "to adopt the configured layout (retiring the agent's globals and its updates not yet aggregated): kourai council layout reset aidos",
    });
    const show = (await run(layoutShow as never, { dataDir, layouts })) as {
      agents: { agent: string; status: string }[];
    };
    expect(show.agents.find((a) => a.agent === 'aidos')?.status).toBe('differs');
    expect(show.agents.find((a) => a.agent === 'metis')?.status).toBe('not adopted yet');
    expect(layoutShow.render?.(show as never, ctx)).toMatch(
      /the council will not start until these agree: kourai council layout reset aidos/,
    );
    const one = (await run(layoutShow as never, { agent: 'aidos', dataDir, layouts, json: true })) as {
      agents: { configured: { tensors: unknown[] }; in_force: { tensors: unknown[]; since_round: number } }[];
    };
    expect(one.agents).toHaveLength(1);
    expect(one.agents[0]?.in_force).toMatchObject({ tensors: [{ name: 'junk', shape: [1] }], since_round: 1 });

    const reset = (await run(layoutReset as never, { agent: 'aidos', dataDir, layouts })) as {
      since_round: number;
      layout: { coords: number };
      removed: unknown[];
    };
    expect(reset).toMatchObject({ agent: 'aidos', since_round: 1, layout: { coords: 28 }, removed: [] });
    await expect(run(layoutReset as never, { agent: 'aidos', dataDir, layouts })).rejects.toMatchObject({
      exitCode: ExitCode.usage,
      message: expect.stringMatching(/already is the configured one/),
    });
    await expect(run(layoutReset as never, { agent: 'cupid', dataDir, layouts })).rejects.toMatchObject({
      exitCode: ExitCode.usage,
    });

    c = await startTestCouncil({ data_dir: dataDir }, ctx.home);
    const t = await c.token('sparta');
    expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/aidos', t, body(update(1)))).status).toBe(201);
    ctx = undefined; // the council's close removes the directory
  });

  it("reset while serving: the agent's pending updates in the old layout are dropped, its old global is retired, forges start afresh", async () => {
    c = await startTestCouncil({ min_forges: 1, layouts: { metis: SPECS } });
    ctx = testCtx();
    const dataDir = c.config.data_dir;
    const t = await c.token('athens');
    await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(1)));
    await call(c.url, 'POST', '/v1/rounds/1/seal', t, {});
    await c.server.council.idle();
    expect((await call(c.url, 'GET', '/v1/rounds/current', t)).json).toMatchObject({ round: 2, globals: { metis: 1 } });
    await call(c.url, 'PUT', '/v1/rounds/2/updates/metis', t, body(update(2)));
    const rank4 = [
      { name: SPECS[0]!.name, shape: [4, 8] },
      { name: SPECS[1]!.name, shape: [6, 4] },
    ];
    const reset = (await run(layoutReset as never, {
      agent: 'metis',
      dataDir,
      layouts: JSON.stringify({ metis: rank4 }),
    })) as { since_round: number; removed: { forge: string; round: number }[]; retired_global_round: number };
    expect(reset).toMatchObject({ since_round: 2, removed: [{ forge: 'athens', round: 2 }], retired_global_round: 1 });
    const status = (await call(c.url, 'GET', '/v1/rounds/current', t)).json;
    expect(status).toMatchObject({ round: 2, you: { submitted: [] } });
    // Forges start afresh: from round 0, the public initialisation of the new layout (protocol v2).
    expect(status.globals).toEqual({ metis: 0 });
    const g = (await call(c.url, 'GET', '/v1/global/metis', t)).json;
    expect(g).toMatchObject({ agent: 'metis', round: 0, strategy: 'public-init' });
    expect(g.tensors.map((x: { shape: number[] }) => x.shape)).toEqual([
      [4, 8],
      [6, 4],
    ]);
    // The old round's aggregate is still served, in its own layout.
    expect(
      (await call(c.url, 'GET', '/v1/rounds/1/aggregate/metis', t)).json.tensors.map(
        (x: { shape: number[] }) => x.shape,
      ),
    ).toEqual([
      [2, 8],
      [6, 2],
    ]);
    const r4 = body(update(3, { specs: rank4 }));
    expect((await call(c.url, 'PUT', '/v1/rounds/2/updates/metis', t, r4)).status).toBe(201);
  });
});

describe('kourai council migrate and status (SQLite)', () => {
  it('migrate creates or upgrades council.db and says from which version; status lists the serving process and the round', async () => {
    ctx = testCtx();
    const dataDir = join(ctx.home, 'council');
    expect(await run(migrate as never, { dataDir })).toEqual({
      backend: 'sqlite',
      database: dataDir,
      from_version: 0,
      to_version: 3,
    });
    expect(await run(migrate as never, { dataDir })).toMatchObject({ from_version: 3, to_version: 3 });
    c = await startTestCouncil({ data_dir: dataDir }, ctx.home);
    const s = (await run(status as never, { dataDir })) as StatusResult;
    expect(s).toMatchObject({ backend: 'sqlite', round: { round: 1, state: 'open', cohort: null } });
    expect(s.processes).toHaveLength(1);
    expect(s.processes[0]).toMatchObject({ id: 'council', url: c.url, role: 'serving', stale: false });
    // A process that stopped cleanly is no longer listed (the home, council.db in it, goes with ctx).
    await c.server.close();
    c = undefined;
    expect(((await run(status as never, { dataDir })) as StatusResult).processes).toEqual([]);
  });
});
