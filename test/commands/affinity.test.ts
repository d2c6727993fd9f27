import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import affinity from '../../src/commands/affinity.js';
import stats from '../../src/commands/memoir/stats.js';
import { runCommand } from '../../src/run-command.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';
import { sampleForge } from '../helpers/forge.js';

let ctx: TestCtx;
let memoirs: string[];
beforeEach(async () => {
  ctx = testCtx();
  memoirs = await sampleForge(ctx.home);
});
afterEach(() => removeDir(ctx.home));

describe('kourai affinity', () => {
  it('sums affinity deltas per agent (as memoir stats does), with tier, next tier, trend and last change', async () => {
    const r = await affinity.run(affinity.options.parse({}), ctx);
    const s = await stats.run(stats.options.parse({}), testCtx({ home: ctx.home }));
    expect(r.forges).toEqual(['ariadne/sample-forge']);
    expect(r.memoirs).toBe(4);
    for (const a of s.by_agent) expect(r.agents.find((x) => x.agent === a.agent)?.affinity).toBeCloseTo(a.affinity, 6);
    const techne = r.agents.find((a) => a.agent === 'techne');
    expect(techne).toMatchObject({
      affinity: 0.34,
      tier: 'familiar',
      next_tier: 'trusted',
      to_next_tier: 0.06,
      forge: 'ariadne/sample-forge',
    });
    expect(techne?.last_change?.delta).not.toBe(0);
    expect(techne?.trend[techne.trend.length - 1]).toBe(0.34);
    expect(techne?.sparkline).toHaveLength(techne?.trend.length ?? -1);
    expect(r.tiers).toEqual([
      { name: 'stranger', min: null },
      { name: 'familiar', min: 0.15 },
      { name: 'trusted', min: 0.4 },
      { name: 'bonded', min: 0.7 },
    ]);
  });

  it('renders a table with a sparkline and the tier legend', async () => {
    await runCommand(() => import('../../src/commands/affinity.js') as never, { memoir: [], agent: [] }, ctx);
    const out = ctx.stdout.text;
    expect(out.split('\n')[0]).toMatch(/^AGENT\s+AFFINITY\s+TIER\s+NEXT\s+TREND\s+LAST CHANGE$/);
    expect(out).toMatch(/^techne\s+0\.34\s+familiar\s+trusted in 0\.06\s+[▁▂▃▄▅▆▇█]+\s+[+-]0\.0\d+ session-/m);
    expect(out).toContain('tiers: familiar ≥ 0.15 · trusted ≥ 0.4 · bonded ≥ 0.7 (below: stranger) · 4 memoirs');
  });

  it('--agent narrows; --json is the result document', async () => {
    await runCommand(
      () => import('../../src/commands/affinity.js') as never,
      { memoir: [], agent: ['cupid'], json: true },
      ctx,
    );
    const r = JSON.parse(ctx.stdout.text) as { agents: { agent: string; tier: string }[] };
    expect(r.agents.map((a) => a.agent)).toEqual(['cupid']);
    expect(r.agents[0]?.tier).toBe('familiar');
  });

  it('does not add up different forges', async () => {
    const other = join(ctx.home, 'projects', 'theseus', 'other-forge');
    cpSync(join(ctx.home, 'projects', 'ariadne', 'sample-forge'), other, { recursive: true });
    const r = await affinity.run(affinity.options.parse({}), testCtx({ home: ctx.home }));
    expect(r.forges.sort()).toEqual(['ariadne/sample-forge', 'theseus/other-forge']);
    const techne = r.agents.filter((a) => a.agent === 'techne');
    expect(techne.map((a) => a.affinity)).toEqual([0.34, 0.34]);
    expect(memoirs).toHaveLength(4);
  });
});
