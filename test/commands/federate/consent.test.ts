import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConsentResult } from '../../../src/commands/federate/consent.js';
import type { KouraiError } from '../../../src/errors.js';
import { ExitCode } from '../../../src/errors.js';
import { ConsentStore } from '../../../src/store/consent-store.js';
import { openStateDb } from '../../../src/store/state-db.js';
import { runCli } from '../../helpers/run.js';
import { testCtx, type TestCtx } from '../../helpers/ctx.js';

const consentCmd = () => import('../../../src/commands/federate/consent.js');
let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => ctx.cleanup());

const stored = (): ConsentStore => new ConsentStore(openStateDb(ctx.home));
async function failure(p: Promise<unknown>): Promise<KouraiError> {
  try {
    await p;
  } catch (err) {
    return err as KouraiError;
  }
  throw new Error('expected the command to fail');
}

describe('kourai federate consent (non-interactive)', () => {
  it('--allow a,b --deny c stores each stance with a timestamp and reports every agent in scene order', async () => {
    const { json, code } = await runCli(consentCmd, { allow: ['aidos,metis'], deny: ['kallos'], json: true }, ctx);
    expect(code).toBe(0);
    const r = json as ConsentResult;
    expect(r).toMatchObject({ changed: true, via: 'flags', decision_id: 1, applies_from: 'next_round' });
    expect(r.agents.map((a) => a.agent)).toEqual([
      'hephaestus',
      'aidos',
      'cupid',
      'metis',
      'kallos',
      'aletheia',
      'mneme',
      'dokimasia',
      'techne',
      'puck',
    ]);
    expect(r.agents.find((a) => a.agent === 'aidos')).toMatchObject({
      allowed: true,
      locked: false,
      decided_at: '2026-11-22T10:00:00.000Z',
    });
    expect(r.agents.find((a) => a.agent === 'kallos')).toMatchObject({
      allowed: false,
      decided_at: '2026-11-22T10:00:00.000Z',
    });
    expect(r.agents.find((a) => a.agent === 'techne')).toMatchObject({ allowed: false, decided_at: null });
    expect(r.agents.find((a) => a.agent === 'cupid')).toMatchObject({ allowed: false, locked: true });
    const s = stored();
    expect(s.history()).toEqual([
      {
        id: 1,
        decidedAt: '2026-11-22T10:00:00.000Z',
        via: 'flags',
        agents: [
          { agent: 'aidos', allowed: true },
          { agent: 'kallos', allowed: false },
          { agent: 'metis', allowed: true },
        ],
      },
    ]);
  });

  it('a later decision revokes: the new stance wins, the old one stays in the history', async () => {
    await runCli(consentCmd, { allow: ['all'] }, ctx);
    ctx.now = () => new Date('2026-10-05T09:00:00Z');
    const { json } = await runCli(consentCmd, { deny: ['metis'], json: true }, ctx);
    const r = json as ConsentResult;
    expect(
      r.agents
        .filter((a) => a.allowed)
        .map((a) => a.agent)
        .sort(),
    ).toEqual(['aidos', 'aletheia', 'dokimasia', 'hephaestus', 'kallos', 'mneme', 'techne']);
    expect(r.agents.find((a) => a.agent === 'metis')?.decided_at).toBe('2026-10-05T09:00:00.000Z');
    expect(stored().history()).toHaveLength(2);
  });

  it.each([
    [{ allow: ['aidos,hermes'] }, /--allow: unknown agent "hermes"/],
    [{ deny: ['zeus'] }, /--deny: unknown agent "zeus"/],
    [{ allow: ['cupid'] }, /cupid is bond-only and can never speak/],
    [{ allow: ['metis,puck'] }, /puck is bond-only/],
    [{ allow: ['aidos'], deny: ['aidos'] }, /both name aidos/],
    [{ allow: ['aidos'], show: true }, /--show cannot be combined/],
  ])('%o is a usage error and nothing is stored', async (raw, msg) => {
    const err = await failure(runCli(consentCmd, raw, ctx));
    expect(err.exitCode).toBe(ExitCode.usage);
    expect(err.message).toMatch(msg);
    expect(stored().history()).toEqual([]);
  });

  it('without flags in a non-interactive session: fails and names the flags to pass', async () => {
    const err = await failure(runCli(consentCmd, {}, ctx));
    expect(err.exitCode).toBe(ExitCode.usage);
    expect(err.message).toMatch(/needs an interactive terminal/);
    expect(err.hint).toMatch(/--allow a,b --deny c/);
  });

  it('--show prints the current stances and changes nothing; cupid in --deny is accepted (it is true)', async () => {
    await runCli(consentCmd, { allow: ['techne'], deny: ['cupid'] }, ctx);
    const { stdout } = await runCli(consentCmd, { show: true }, ctx);
    expect(stdout).toMatch(/current consent/);
    expect(stdout).toMatch(/speaks\s+techne\s+defers: “I will follow your call\.”/);
    expect(stdout).toMatch(/locked\s+cupid/);
    expect(stdout).toMatch(/may speak for the forge: techne/);
    expect(stdout).toMatch(/never leaves the forge/);
    expect(stored().history()).toHaveLength(1);
  });
});
