import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import synth from '../../../src/commands/memoir/synth.js';
import { runCommand } from '../../../src/run-command.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { runCmd } from '../../helpers/memory.js';

const ctxs: TestCtx[] = [];
const newCtx = (): TestCtx => {
  const c = testCtx();
  ctxs.push(c);
  return c;
};
afterEach(() => {
  for (const c of ctxs.splice(0)) removeDir(c.home);
});

const techneRevisions = (memoirs: string[]): string[] =>
  memoirs
    .flatMap((m) => readFileSync(m, 'utf8').split('\n').filter(Boolean))
    .map((l) => JSON.parse(l) as { agent: string; source: string; agent_proposed: string })
    .filter((e) => e.agent === 'techne' && e.source === 'player_revision')
    .map((e) => e.agent_proposed);

describe('memoir synth: planted preferences', () => {
  it('the result names the player’s planted preferences; --player picks the documented profile', async () => {
    const a = await runCmd(synth, { json: true }, newCtx());
    expect(a.profile).toMatchObject({
      player: 'ariadne',
      preferences: ['early-returns', 'typed-signatures', 'conventional-commits'],
      craft: ['no-leftovers', 'cited-corrections'],
      origin: 'named',
    });
    const ctx = newCtx();
    const d = await runCmd(synth, { player: 'daedalus' }, ctx);
    expect(d.profile.preferences).toEqual(['single-exit', 'untyped-signatures', 'why-comments', 'numbered-steps']);
    expect(synth.render?.(d, ctx)).toContain(
      'planted preferences of daedalus: single-exit, untyped-signatures, why-comments, numbered-steps (craft: no-leftovers, cited-corrections)',
    );
  });

  it('--preferences replaces them: the player’s revisions follow the flag', async () => {
    const r = await runCmd(synth, { player: 'ariadne', preferences: 'single-exit', sessions: '6' }, newCtx());
    expect(r.profile).toMatchObject({ preferences: ['single-exit'], origin: 'flag' });
    const revisions = techneRevisions(r.memoirs);
    expect(revisions.length).toBeGreaterThan(5);
    for (const t of revisions) expect(t).toContain('let result');
  });

  it('same flags, same forge byte for byte', async () => {
    const read = (ms: string[]) => ms.map((m) => readFileSync(m, 'utf8')).join('');
    const a = await runCmd(synth, { player: 'icarus', seed: '11' }, newCtx());
    const b = await runCmd(synth, { player: 'icarus', seed: '11' }, newCtx());
    expect(read(b.memoirs)).toBe(read(a.memoirs));
  });

  it.each([
    ['early-returns,tabs', /--preferences: unknown preference "tabs"/],
    ['early-returns,single-exit', /opposite poles of one axis \(guard\)/],
    ['no-leftovers', /craft, which every player holds/],
  ])('bad --preferences %s: exit 2 and nothing written', async (prefs, message) => {
    const ctx = newCtx();
    await expect(
      runCommand(() => import('../../../src/commands/memoir/synth.js') as never, { preferences: prefs }, ctx),
    ).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(message) });
    expect(existsSync(join(ctx.home, 'projects'))).toBe(false);
  });
});
