import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/memoir/format/agents.js';
import { heldOutPairs } from '../../src/memoir/sample/planted/held-out.js';
import { profileFor } from '../../src/memoir/sample/planted/profiles.js';
import type { PreferenceId } from '../../src/memoir/sample/planted/catalogue.js';
import { synthSessions } from '../../src/memoir/sample/synth.js';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';
import { hashString } from '../../src/train/encoder/hashed-ngrams.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import type { Example } from '../../src/train/examples/types.js';
import { bondView } from '../../src/train/examples/views.js';
import { Inference } from '../../src/train/inference.js';
import type { LoraWeights } from '../../src/train/lora.js';
import { DEFAULT_SETTINGS, train } from '../../src/train/trainer.js';
import { indexedLines, type Indexed } from './examples/helpers.js';

/**
 * The quality bar on the sample generator's planted preferences: bond adapters trained on
 * the 8-session sample forge rank ≥ 90% of fresh held-out pairs (words never in any memoir) the
 * player's way — for each of the player's preferences and the shared craft — and two players'
 * bonds disagree where their tastes do. With shuffled labels, validation stays at chance.
 */
const base = new BaseModel(builtinBaseSpec());
const enc = inputEncoder(base.spec);
const encode = (t: string) => enc(t, null);

function forge(player: string, seed: number, sessions: number): Indexed {
  return indexedLines(
    [...synthSessions({ seed, sessions, turns: 12, profile: profileFor(player) })].map((x) => x.lines),
  );
}

function bond(src: Indexed, agent: Agent, shuffle?: number): LoraWeights {
  const out = trainOn(bondView(src, agent).examples, agent, shuffle);
  if (out.status !== 'trained') throw new Error(`${agent}: ${out.reason}`);
  return out.lora;
}

/** Labels shuffled by a hash of the example's text and a seed: duplicates of one item agree. */
function shuffled(examples: readonly Example[], seed: number): Example[] {
  const coin = (t: string): boolean => (hashString(t, seed) & 1) === 1;
  return examples.map((e) => {
    if (e.kind === 'pair') return coin(e.chosen + e.rejected) ? { ...e, chosen: e.rejected, rejected: e.chosen } : e;
    if (e.kind === 'binary') return coin(e.text) ? { ...e, label: e.label === 1 ? 0 : 1 } : e;
    return e;
  });
}

function trainOn(examples: readonly Example[], agent: Agent, shuffle?: number) {
  return train(base, encode, {
    agent,
    kind: 'bond',
    examples: shuffle === undefined ? examples : shuffled(examples, shuffle),
    frozen: [],
    settings: { ...DEFAULT_SETTINGS, ...(shuffle === undefined ? {} : { seed: shuffle }) },
  });
}

function heldOutAccuracy(lora: LoraWeights, agent: Agent, pref: PreferenceId): number {
  const inf = new Inference({
    agent,
    head: 'score',
    base,
    council: null,
    bond: { lora, alpha: DEFAULT_SETTINGS.alpha, version: 1 },
  });
  // Craft axes show in several agents' outputs: each agent's adapter is judged on its own pairs.
  const pairs = heldOutPairs(pref, { seed: 11, n: 400 })
    .filter((p) => p.agent === agent)
    .slice(0, 200);
  expect(pairs.length).toBeGreaterThanOrEqual(150);
  let ok = 0;
  for (const p of pairs) {
    const [a, b] = inf.outputs([encode(p.preferred), encode(p.dispreferred)], 0);
    if (a![0]! > b![0]!) ok++;
  }
  return ok / pairs.length;
}

describe('bond adapters on the planted preferences (sample forge, 8 sessions)', { timeout: 180_000 }, () => {
  let ariadne: Indexed;
  let daedalus: Indexed;
  const adapters = new Map<string, LoraWeights>();
  beforeAll(() => {
    ariadne = forge('ariadne', 7, 8);
    daedalus = forge('daedalus', 7, 8);
    adapters.set('ariadne/techne', bond(ariadne, 'techne'));
    adapters.set('ariadne/mneme', bond(ariadne, 'mneme'));
    adapters.set('daedalus/techne', bond(daedalus, 'techne'));
  }, 180_000);
  afterAll(() => {
    ariadne.close();
    daedalus.close();
  });

  const cases: [string, Agent, PreferenceId][] = [
    ['ariadne', 'techne', 'early-returns'],
    ['ariadne', 'techne', 'typed-signatures'],
    ['ariadne', 'mneme', 'conventional-commits'],
    ['ariadne', 'techne', 'no-leftovers'],
    ['daedalus', 'techne', 'single-exit'],
    ['daedalus', 'techne', 'untyped-signatures'],
    ['daedalus', 'techne', 'why-comments'],
    ['daedalus', 'techne', 'no-leftovers'],
  ];
  for (const [player, agent, pref] of cases) {
    it(`${player}'s ${agent} bond: ≥ 90% on held-out ${pref} pairs`, () => {
      expect(heldOutAccuracy(adapters.get(`${player}/${agent}`)!, agent, pref)).toBeGreaterThanOrEqual(0.9);
    });
  }

  it('two players differ: daedalus’s bond prefers the single exit ariadne’s ranks last', () => {
    expect(heldOutAccuracy(adapters.get('ariadne/techne')!, 'techne', 'single-exit')).toBeLessThanOrEqual(0.1);
    expect(heldOutAccuracy(adapters.get('daedalus/techne')!, 'techne', 'early-returns')).toBeLessThanOrEqual(0.1);
  });
});

describe('shuffled labels on the sample forge', () => {
  it('validation accuracy stays at chance (0.5 ± 0.07), pooled over forges and agents', { timeout: 300_000 }, () => {
    let hits = 0;
    let n = 0;
    for (const seed of [21, 22, 23, 24, 25]) {
      const src = forge('ariadne', seed, 16);
      try {
        for (const agent of ['techne', 'mneme', 'dokimasia'] as const) {
          const out = trainOn(bondView(src, agent).examples, agent, seed);
          if (out.status !== 'trained') continue;
          for (const m of out.report.metrics.filter((x) => x.kind === 'pair' || x.kind === 'binary')) {
            hits += m.value * m.n;
            n += m.n;
          }
        }
      } finally {
        src.close();
      }
    }
    expect(n).toBeGreaterThanOrEqual(200);
    expect(Math.abs(hits / n - 0.5)).toBeLessThanOrEqual(0.07);
  });
});
