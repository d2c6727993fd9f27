import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../../src/council/config.js';
import type { RoundResult } from '../../src/federation/round/run-round.js';
import { sceneOf, sceneText } from '../../src/federation/round/scenes.js';
import { isBondOnly, type Agent } from '../../src/memoir/format/agents.js';
import { CRAFT_PREFERENCES, type PreferenceId } from '../../src/memoir/sample/planted/catalogue.js';
import { heldOutPairs } from '../../src/memoir/sample/planted/held-out.js';
import { NAMED_PROFILES } from '../../src/memoir/sample/planted/profiles.js';
import { headOf } from '../../src/train/adapter-layout.js';
import { Scorer } from '../../src/train/scorer.js';
import type { TestCouncil } from '../council/helpers.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';
import { runCli } from '../helpers/run.js';
import { startForgeCouncil } from './helpers.js';

/**
 * A federation round never makes the forge worse: the sample forge trains its bonds, then one
 * round against a real one-forge council on 127.0.0.1 at the council's default policy (LoRA-FAIR,
 * S = 1, σ = 8) brings home council adapters that are mostly noise. Held-out accuracy — fresh
 * pairs of the player's planted preferences, words never in any memoir, scored through `score`'s
 * own path — stays within noise of before, and `score`/`route` answer as they did.
 */
const synth = () => import('../../src/commands/memoir/synth.js');
const bond = () => import('../../src/commands/train/bond.js');
const join = () => import('../../src/commands/federate/join.js');
const consent = () => import('../../src/commands/federate/consent.js');
const round = () => import('../../src/commands/federate/round.js');
const score = () => import('../../src/commands/score.js');
const route = () => import('../../src/commands/route.js');
const show = () => import('../../src/commands/adapters/show.js');

const PLAYER = 'ariadne';
const A_TS = 'function f(x: number): number {\n  if (x < 0) return 0;\n  return x * 2;\n}\n';
const B_TS = 'function f(x) {\n  let r;\n  if (x >= 0) { r = x * 2 } else { r = 0 }\n  return r\n}\n';
/** Not the probe's seed nor any other test's: these pairs are only ever reported. */
const REPORT_SEED = 0x7e57ab1e;
const PAIRS = 240;

let council: TestCouncil;
let ctx: TestCtx;

interface Accuracy {
  right: number;
  n: number;
  byAgent: Record<string, { right: number; n: number }>;
}

/** Every pair of the player's preferences whose agent scores, through the Scorer `kourai score` opens. */
async function heldOut(lean?: number): Promise<Accuracy> {
  const prefs: PreferenceId[] = [...(NAMED_PROFILES[PLAYER] ?? []), ...CRAFT_PREFERENCES];
  const byAgent = new Map<Agent, { preferred: string; dispreferred: string }[]>();
  for (const p of prefs)
    for (const pair of heldOutPairs(p, { seed: REPORT_SEED, n: PAIRS }))
      if (headOf(pair.agent) === 'score') byAgent.set(pair.agent, [...(byAgent.get(pair.agent) ?? []), pair]);
  const out: Accuracy = { right: 0, n: 0, byAgent: {} };
  for (const [agent, pairs] of byAgent) {
    const scorer = await Scorer.open({
      home: ctx.home,
      env: ctx.env,
      signal: new AbortController().signal,
      agent,
      ...(lean !== undefined ? { lean } : {}),
    });
    try {
      let right = 0;
      for (const p of pairs) if ((await scorer.rank([p.preferred, p.dispreferred])).ranking[0]?.index === 0) right++;
      out.byAgent[agent] = { right, n: pairs.length };
      out.right += right;
      out.n += pairs.length;
    } finally {
      scorer.close();
    }
  }
  return out;
}

const acc = (a: { right: number; n: number }): number => a.right / a.n;

beforeAll(async () => {
  const d = defaults('/unused');
  council = await startForgeCouncil({
    min_forges: 1,
    strategy: d.strategy,
    clip_norm: d.clip_norm,
    noise_multiplier: d.noise_multiplier,
  });
  ctx = testCtx();
}, 120_000);
afterAll(async () => {
  await council?.close();
  ctx?.cleanup();
});

describe('one federation round against a one-forge council (default policy) on the sample forge', () => {
  it(
    'leaves held-out accuracy within noise of before; score and route answer as before and say why',
    { timeout: 2_400_000 },
    async () => {
      await runCli(synth, { player: PLAYER, sessions: 8, json: true }, ctx);
      await runCli(bond, { json: true }, ctx);
      const before = await heldOut();
      const scoreBefore = (await runCli(score, { agent: 'techne', candidates: [A_TS, B_TS], json: true }, ctx))
        .json as { ranking: { index: number }[] };
      const routeBefore = (await runCli(route, { task: 'write tests for the parser', json: true }, ctx)).json as {
        distribution: { agent: string; p: number }[];
      };

      await runCli(join, { server: council.url, token: await council.token('athens') }, ctx);
      await runCli(consent, { allow: ['all'] }, ctx);
      const r = (await runCli(round, { json: true }, ctx)).json as RoundResult & { outcome: 'completed' };
      expect(r.outcome).toBe('completed');
      expect(r.details.forges).toBe(1);
      expect(r.stored.length).toBeGreaterThan(0);

      const after = await heldOut();
      // For the record only (not asserted): the fixed lean 0.5 every answer used before leans were chosen.
      const fixed = await heldOut(0.5);
      process.stderr.write(`held-out accuracy at the old fixed lean 0.5: ${acc(fixed).toFixed(4)}\n`);
      // Within noise: no worse than two standard errors of the difference of two shares over n pairs.
      const p = acc(before);
      const se = Math.sqrt((2 * p * (1 - p)) / before.n);
      process.stderr.write(
        `${`held-out accuracy over ${before.n} fresh pairs: before ${acc(before).toFixed(4)}, after ${acc(after).toFixed(4)} (2·se ${(2 * se).toFixed(4)})`}\n`,
      );
      for (const [agent, a] of Object.entries(before.byAgent))
        process.stderr.write(
          `${`  ${agent}: ${acc(a).toFixed(4)} → ${acc(after.byAgent[agent]!).toFixed(4)} (${a.n} pairs)`}\n`,
        );
      expect(acc(after)).toBeGreaterThanOrEqual(acc(before) - 2 * se);
      for (const [agent, a] of Object.entries(before.byAgent)) {
        const q = acc(a);
        expect(acc(after.byAgent[agent]!), agent).toBeGreaterThanOrEqual(
          q - 2 * Math.sqrt((2 * Math.max(q * (1 - q), 1 / a.n)) / a.n),
        );
      }

      const s = (await runCli(score, { agent: 'techne', candidates: [A_TS, B_TS], json: true }, ctx)).json as {
        ranking: { index: number }[];
        applied: { source: string; why: string; council: unknown };
      };
      expect(s.ranking.map((x) => x.index)).toEqual(scoreBefore.ranking.map((x) => x.index));
      expect(s.applied.source).toBe('validation');
      expect(s.applied.why).toMatch(/held-out example/);
      const text = await runCli(score, { agent: 'techne', candidates: [A_TS, B_TS] }, ctx);
      expect(text.stdout).toMatch(/why: council v1 /);
      const rt = (await runCli(route, { task: 'write tests for the parser', json: true }, ctx)).json as {
        distribution: { agent: string }[];
        applied: { source: string };
      };
      expect(rt.distribution[0]?.agent).toBe(routeBefore.distribution[0]?.agent);
      expect(rt.applied.source).toBe('validation');
      // Three plainly worded tasks, through `route`, after the round and with the lean it chose.
      for (const [task, agent] of [
        ['write tests for the parser', 'dokimasia'],
        ['is this citation real?', 'aletheia'],
        ['does this PR description read like AI slop?', 'aidos'],
      ] as const) {
        const d = (await runCli(route, { task, json: true }, ctx)).json as { distribution: { agent: string }[] };
        expect(d.distribution[0]?.agent, task).toBe(agent);
      }

      // A bond trained after the round trains over the council only where it passed; accuracy holds.
      const retrained = (await runCli(bond, { json: true }, ctx)).json as {
        agents: { agent: string; status: string; council_version: number | null }[];
      };
      const failed = new Set(
        r.details.came_back.filter((c) => c.validation && !c.validation.passed).map((c) => c.agent as string),
      );
      expect(failed.size).toBeGreaterThan(0);
      for (const a of retrained.agents)
        if (a.status === 'trained' && failed.has(a.agent)) expect(a.council_version, a.agent).toBeNull();
      const again = await heldOut();
      process.stderr.write(`held-out accuracy after train bond again: ${acc(again).toFixed(4)}\n`);
      expect(acc(again)).toBeGreaterThanOrEqual(acc(before) - 2 * se);
      const s2 = (await runCli(score, { agent: 'techne', candidates: [A_TS, B_TS], json: true }, ctx)).json as {
        ranking: { index: number }[];
        applied: { why: string };
      };
      expect(s2.ranking.map((x) => x.index)).toEqual(scoreBefore.ranking.map((x) => x.index));

      // adapters show: the council version's signal-to-noise and whether it passed validation.
      const sh = (await runCli(show, { agent: 'techne', kind: 'council', json: true }, ctx)).json as {
        council: { snr: number | null; passed: boolean | null; validation: unknown };
      };
      expect(sh.council.snr).not.toBeNull();
      expect(typeof sh.council.passed).toBe('boolean');
      const shText = await runCli(show, { agent: 'techne', kind: 'council' }, ctx);
      expect(shText.stdout).toMatch(/signal\/noise/);
      expect(shText.stdout).toMatch(/validation/);
      // One validation line: a council version has no training metric of its own to show as "—".
      expect(shText.stdout.match(/^ {2}validation/gm)).toHaveLength(1);

      // The scene tells what happened: one forge, measured on the player's held-out scenes.
      const scene = sceneText(sceneOf(r.details));
      process.stderr.write(`${scene}\n`);
      expect(scene).toMatch(/Only this forge took part in this round/);
      expect(scene).not.toMatch(/From the other forges/);
      expect(scene).not.toMatch(/Across the forges/);
      expect(scene).toMatch(/held-out example/);
      for (const c of r.details.came_back.filter((x) => x.aggregated && !isBondOnly(x.agent))) {
        // Every agent with a bond was measured; an agent whose council adapter failed is not applied.
        if (c.validation && !c.validation.passed) expect(c.validation.lean).toBe(0);
      }
    },
  );
});
