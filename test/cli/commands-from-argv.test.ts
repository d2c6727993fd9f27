import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../src/cli.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';
import { readEntries, sampleForge } from '../helpers/forge.js';

/**
 * argv -> options -> run -> result, in-process through the real commander tree, on the sample
 * forge: what reaches a command from the command line is what it acts on. (The options alone
 * are the table in argv.test.ts.)
 */
let home: string;
let memoir: string;
let scene: string;
beforeAll(async () => {
  home = testCtx().home;
  memoir = (await sampleForge(home))[3] as string;
  scene = readEntries(memoir).find((e) => e.agent === 'techne')?.scene_id as string;
});
afterAll(() => removeDir(home));

async function cli(argv: string[]): Promise<{ code: number; out: string; ctx: TestCtx }> {
  const ctx = testCtx({ home });
  let code = 0;
  const program = buildCli(
    () => ctx,
    (c) => (code = c),
  );
  await program.parseAsync(argv, { from: 'user' });
  return { code, out: ctx.stdout.text, ctx };
}

const json = async (argv: string[]): Promise<Record<string, unknown>> => {
  const r = await cli(argv);
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as Record<string, unknown>;
};

describe('memory commands', () => {
  it.each([
    [
      ['memoir', 'search', 'naming', 'style', '--limit', '3', '--agent', 'kallos', '--json'],
      { query: 'naming style', limit: 3 },
    ],
    [['memoir', 'search', 'naming', '--limit', '999', '--json'], { limit: 200, capped: true }],
    [['memoir', 'buffer', '--max', '7', '--dry-run', '--json'], { bound: 7, dry_run: true, manifest: null }],
    [['memoir', 'episodes', '--by', 'session', '--json'], { by: 'session', written: 0 }],
  ])('%j', async (argv, expected) => {
    expect(await json(argv)).toMatchObject(expected);
  });

  it('buffer --split shared keeps only shareable entries', async () => {
    const all = (await json(['memoir', 'buffer', '--max', '1000', '--split', 'shared', '--dry-run', '--json'])) as {
      kept: { source: string; agent: string }[];
    };
    expect(all.kept.length).toBeGreaterThan(0);
    for (const k of all.kept) {
      expect(['cupid', 'puck']).not.toContain(k.agent);
      expect(['specialist_proposed', 'agent_interrupt', 'disagreement_resolution']).toContain(k.source);
    }
  });
});

describe('feedback, replay, affinity', () => {
  it('feedback --rating --kind --comment writes the answer', async () => {
    const out = await json([
      'feedback',
      '--memoir',
      memoir,
      '--agent',
      'techne',
      '--scene',
      scene,
      '--proposed',
      'x = 1',
      '--rating',
      '4',
      '--kind',
      'accepted',
      '--comment',
      'ok',
      '--force',
      '--json',
    ]);
    expect(readEntries(memoir).at(-1)).toMatchObject({
      entry_id: out.entry_id,
      likert: 4,
      comment: 'ok',
      agent_proposed: 'x = 1',
    });
  });

  it('feedback --proposed-file --revised-file writes a preference pair; the gate flags reach the gate', async () => {
    const p = join(home, 'p.txt');
    const q = join(home, 'q.txt');
    writeFileSync(p, 'a\n');
    writeFileSync(q, 'b\n');
    const check = await json([
      'feedback',
      '--memoir',
      memoir,
      '--agent',
      'techne',
      '--scene',
      scene,
      '--proposed-file',
      p,
      '--min-tier',
      'trusted',
      '--cooldown',
      '3',
      '--check',
      '--json',
    ]);
    expect(check).toMatchObject({
      would_ask: false,
      reason: 'check_only',
      gate: { min_tier: 'trusted', cooldown: 3, reason: 'affinity_below_tier' },
    });
    const r = await json([
      'feedback',
      '--memoir',
      memoir,
      '--agent',
      'techne',
      '--scene',
      scene,
      '--proposed-file',
      p,
      '--revised-file',
      q,
      '--rating',
      '2',
      '--kind',
      'modified',
      '--min-tier',
      'bonded',
      '--force',
      '--json',
    ]);
    expect(r).toMatchObject({ answered: true, reason: 'forced' });
    expect(readEntries(memoir).at(-1)?.training_label?.preference_pair).toEqual([
      { text: 'a', score: 0 },
      { text: 'b', score: 1 },
    ]);
  });

  it('memoir replay --agent (repeatable) --ndjson keeps only those agents', async () => {
    const r = await cli(['memoir', 'replay', '--agent', 'techne', '--agent', 'cupid', '--ndjson']);
    const agents = new Set(
      r.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; agent?: string })
        .filter((x) => x.type === 'beat')
        .map((x) => x.agent),
    );
    expect(agents).toEqual(new Set(['techne', 'cupid']));
  });

  it('affinity --agent --json', async () => {
    const r = (await json(['affinity', '--agent', 'techne', '--json'])) as { agents: { agent: string }[] };
    expect(r.agents.map((a) => a.agent)).toEqual(['techne']);
  });
});

describe('privacy commands', () => {
  it.each([
    [['privacy', 'epsilon', '--sigma', '2', '--json'], { sigma: 2, sample_rate: 1, steps: 1, delta: 1e-5 }],
    [
      ['privacy', 'sigma', '--epsilon', '3', '--steps', '5', '--json'],
      { target_epsilon: 3, sample_rate: 1, steps: 5, delta: 1e-5 },
    ],
    [['privacy', 'ledger', '--agent', 'aidos', '--json'], { releases: [] }],
  ])('%j', async (argv, expected) => {
    expect(await json(argv)).toMatchObject(expected);
  });

  it('budget flags reach the resolver with their names; consent flags are recorded', async () => {
    const w = await json([
      'whisper',
      '--noise-multiplier',
      '3',
      '--clip-norm',
      '0.5',
      '--forge-epsilon',
      '4',
      '--agent-epsilon',
      '2',
      '--delta',
      '1e-6',
      '--json',
    ]);
    expect(w.config).toMatchObject({
      forge_epsilon: 4,
      agent_epsilon: 2,
      delta: 1e-6,
      noise_multiplier: 3,
      clip_norm: 0.5,
      origin: { forge_epsilon: 'flag', clip_norm: 'flag' },
    });
    const allowed = (await json(['federate', 'consent', '--allow', 'aidos,metis', '--allow', 'kallos', '--json'])) as {
      agents: { agent: string; allowed: boolean }[];
    };
    expect(allowed.agents.filter((a) => a.allowed).map((a) => a.agent)).toEqual(['aidos', 'metis', 'kallos']);
  });
});
