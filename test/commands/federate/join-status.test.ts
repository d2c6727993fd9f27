import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join as joinPath } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JoinResult } from '../../../src/commands/federate/join.js';
import type { LeaveResult } from '../../../src/commands/federate/leave.js';
import { ExitCode, type KouraiError } from '../../../src/errors.js';
import type { FederationStatus } from '../../../src/federation/round/status.js';
import { membershipPath } from '../../../src/federation/round/membership.js';
import { BUILTIN_FINGERPRINT } from '../../../src/train/fingerprint.js';
import { sampleForge } from '../../helpers/forge.js';
import { runCli } from '../../helpers/run.js';
import { testCtx, type TestCtx } from '../../helpers/ctx.js';
import { startTestCouncil, type TestCouncil } from '../../council/helpers.js';

const join = () => import('../../../src/commands/federate/join.js');
const leave = () => import('../../../src/commands/federate/leave.js');
const status = () => import('../../../src/commands/federate/status.js');
const consent = () => import('../../../src/commands/federate/consent.js');
const round = () => import('../../../src/commands/federate/round.js');

let council: TestCouncil;
let ctx: TestCtx;
beforeEach(async () => {
  council = await startTestCouncil({ base_fingerprints: [BUILTIN_FINGERPRINT] });
  ctx = testCtx();
});
afterEach(async () => {
  await council.close();
  ctx.cleanup();
});

function join_(dir: string, name: string, text: string): string {
  const path = joinPath(dir, name);
  writeFileSync(path, text, { mode: 0o600 }); // a token file must be private to the user
  return path;
}

async function failure(p: Promise<unknown>): Promise<KouraiError> {
  try {
    await p;
  } catch (err) {
    return err as KouraiError;
  }
  throw new Error('expected a failure');
}

describe('kourai federate join / leave / status', () => {
  it('join says what it found, never prints the token, and stores it 0600', async () => {
    const token = await council.token('athens');
    const { json, stdout } = await runCli(join, { server: `${council.url}/`, token, json: true }, ctx);
    const r = json as JoinResult;
    expect(r).toMatchObject({
      joined: true,
      url: council.url,
      forge: 'athens',
      protocol: 2,
      base: { forge: BUILTIN_FINGERPRINT, match: true },
      exiled: false,
      privacy_policy: {
        clip_norm: 1,
        noise_multiplier: 10,
        accepted: { clip_norm: { min: 0, max: 1 }, noise_multiplier: { min: 0, max: 10 } },
        tail_margin: 10,
      },
      forge_privacy: { clip_norm: 1, noise_multiplier: 8 },
      council_policy: { followed: true, epsilon_per_release: expect.closeTo(0.3753, 3), reason: null },
    });
    expect(stdout).not.toContain(token);
    expect(ctx.stderr.text).not.toContain(token);
    expect(statSync(membershipPath(ctx.home)).mode & 0o777).toBe(0o600);
    const text = await runCli(join, { server: council.url, token }, ctx);
    expect(text.stdout).toMatch(/joined the council at .* as forge "athens"/);
    expect(text.stdout).toMatch(/base model sha256:\S+ accepted/);
    expect(text.stdout).not.toContain(token);
  });

  it('join reads the token from stdin (--token -), a file, or KOURAI_COUNCIL_TOKEN; none is exit 2 naming the flags', async () => {
    const token = await council.token('athens');
    const piped = testCtx({ home: ctx.home, stdinText: `${token}\n` });
    expect(
      ((await runCli(join, { server: council.url, token: '-', json: true }, piped)).json as JoinResult).forge,
    ).toBe('athens');
    const env = testCtx({ home: ctx.home, env: { KOURAI_COUNCIL_TOKEN: token } });
    expect(((await runCli(join, { server: council.url, json: true }, env)).json as JoinResult).forge).toBe('athens');
    const none = await failure(runCli(join, { server: council.url }, testCtx({ home: ctx.home })));
    expect(none.exitCode).toBe(ExitCode.usage);
    expect(none.hint).toMatch(/--token T, --token - .*--token-file FILE .*KOURAI_COUNCIL_TOKEN/);
  });

  it('join takes the document `council forge add --json` prints as a token file, and refuses one without a token', async () => {
    const token = await council.token('athens');
    const doc = join_(
      ctx.home,
      'forge.json',
      JSON.stringify({ forge: 'athens', id: 1, token, created_at: 'x' }, null, 2),
    );
    expect(
      ((await runCli(join, { server: council.url, tokenFile: doc, json: true }, ctx)).json as JoinResult).forge,
    ).toBe('athens');
    const bad = join_(ctx.home, 'bad.json', JSON.stringify({ forge: 'athens' }));
    const err = await failure(runCli(join, { server: council.url, tokenFile: bad }, ctx));
    expect(err.exitCode).toBe(ExitCode.usage);
    expect(err.message).toMatch(/bad\.json: a JSON token file needs a "token" string/);
  });

  it('a round against a server that no longer answers like a council: exit 9 with the hint join gives, nothing sent', async () => {
    const token = await council.token('athens');
    await runCli(join, { server: council.url, token }, ctx);
    await runCli(consent, { allow: ['techne'] }, ctx);
    await sampleForge(ctx.home, { sessions: 2, turns: 6 });
    const notCouncil = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    await new Promise<void>((r) => notCouncil.listen(0, '127.0.0.1', r));
    try {
      const path = membershipPath(ctx.home);
      const m = JSON.parse(readFileSync(path, 'utf8')) as { url: string };
      writeFileSync(
        path,
        JSON.stringify({ ...m, url: `http://127.0.0.1:${(notCouncil.address() as AddressInfo).port}` }),
        { mode: 0o600 },
      );
      const err = await failure(runCli(round, { noWait: true }, ctx));
      expect(err.exitCode).toBe(ExitCode.network);
      expect(err.message).toMatch(/does not answer like a kourai council/);
      expect(err.hint).toMatch(/check the URL/);
    } finally {
      notCouncil.close();
    }
  });

  it('a council with another base refuses the join (exit 3) and nothing is stored', async () => {
    const other = await startTestCouncil({ base_fingerprints: ['sha256:another-base'] });
    try {
      const err = await failure(runCli(join, { server: other.url, token: await other.token('athens') }, ctx));
      expect(err.exitCode).toBe(ExitCode.environment);
      expect(err.message).toMatch(/accepts base model sha256:another-base; this forge runs sha256:/);
      expect(() => statSync(membershipPath(ctx.home))).toThrow();
    } finally {
      await other.close();
    }
  });

  it('an unreachable council (exit 9) and a bad URL (exit 2)', async () => {
    const down = await failure(
      runCli(
        join,
        { server: 'http://127.0.0.1:9', token: 'kourai_1_' + 'a'.repeat(43) },
        testCtx({ home: ctx.home, env: {} }),
      ),
    );
    expect(down.exitCode).toBe(ExitCode.network);
    expect(down.message).not.toContain('a'.repeat(43));
    expect((await failure(runCli(join, { server: 'https://user:pw@x.org', token: 't' }, ctx))).exitCode).toBe(
      ExitCode.usage,
    );
  });

  it('status: endpoint, the round, trust, consent and capacity per agent; leave forgets', async () => {
    const before = (await runCli(status, { json: true }, ctx)).json as FederationStatus;
    expect(before).toMatchObject({ joined: false, council: null, reachable: null });
    const token = await council.token('athens');
    await runCli(join, { server: council.url, token }, ctx);
    await runCli(consent, { allow: ['metis', 'aidos'] }, ctx);
    const s = (await runCli(status, { json: true }, ctx)).json as FederationStatus;
    expect(s).toMatchObject({
      joined: true,
      reachable: true,
      council: { url: council.url, forge: 'athens' },
      current_round: { round: 1, state: 'open', submitted: [], sealed: false },
      trust: { trust: 1, exiled: false, source: 'council' },
      unfinished_round: null,
      ledger: { ok: true },
    });
    expect(s.agents.find((a) => a.agent === 'metis')).toMatchObject({
      consent: true,
      releases: 0,
      remaining_fraction: 1,
      can_speak_next: true,
    });
    expect(s.agents.find((a) => a.agent === 'kallos')).toMatchObject({ consent: false, can_speak_next: false });
    expect(s.agents.find((a) => a.agent === 'cupid')).toMatchObject({ consent: 'locked' });
    expect(s.next_sigma).toEqual({ noise_multiplier: 10, source: 'council' });
    // Who can speak next is judged at the council's σ = 10 (one release: ε 0.375), not this forge's σ = 8 (ε 0.478).
    const tight = (await runCli(status, { json: true, agentEpsilon: '0.4' }, ctx)).json as FederationStatus;
    expect(tight.agents.find((a) => a.agent === 'metis')).toMatchObject({ can_speak_next: true });
    const tightOffline = (await runCli(status, { json: true, agentEpsilon: '0.4', offline: true }, ctx))
      .json as FederationStatus;
    expect(tightOffline.next_sigma).toEqual({ noise_multiplier: 8, source: 'forge' });
    expect(tightOffline.agents.find((a) => a.agent === 'metis')).toMatchObject({ can_speak_next: false });
    const text = (await runCli(status, {}, ctx)).stdout;
    expect(text).toMatch(/council {2}http:\/\/127\.0\.0\.1:\d+ as forge "athens"/);
    expect(text).toMatch(/round 1 open, 0\/3 forges sealed/);
    expect(text).not.toContain(token);
    await council.server.close();
    const offline = (await runCli(status, { json: true }, ctx)).json as FederationStatus;
    expect(offline).toMatchObject({ reachable: false, ledger: { ok: true } });
    expect(offline.error).toMatch(/cannot reach/);
    const l = (await runCli(leave, { json: true }, ctx)).json as LeaveResult;
    expect(l).toEqual({ left: true, url: council.url, forge: 'athens' });
    expect(((await runCli(leave, { json: true }, ctx)).json as LeaveResult).left).toBe(false);
  });
});
