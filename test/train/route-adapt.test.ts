import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/memoir/format/agents.js';
import type { RouteExample } from '../../src/train/examples/types.js';
import { Inference } from '../../src/train/inference.js';
import { softmax } from '../../src/train/objectives.js';
import { RoutePrior } from '../../src/train/route-prior/prior.js';
import { DEFAULT_SETTINGS, train } from '../../src/train/trainer.js';
import { readFileSync } from 'node:fs';
import { pickTask, SPECIALIST, taskDescription, TASK_TYPES } from '../../src/memoir/sample/planted/tasks.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import { smallBase } from './helpers.js';

const NOUNS = [
  'billing',
  'search',
  'upload',
  'login',
  'export',
  'sync',
  'report',
  'profile',
  'invoice',
  'gallery',
  'inbox',
  'calendar',
];
const THINGS = ['page', 'service', 'worker', 'module', 'screen'];

/** A player who sends "update the docs" tasks to Mneme (the prior has no cue for them), and test tasks to Dokimasia. */
function history(n: number): RouteExample[] {
  const out: RouteExample[] = [];
  for (let i = 0; i < n; i++) {
    const noun = `${NOUNS[i % NOUNS.length]} ${THINGS[i % THINGS.length]}`;
    const docs = i % 2 === 0;
    const text = docs ? `update the docs for the ${noun}` : `write tests for the ${noun}`;
    out.push({
      agent: 'hephaestus',
      entryId: `e${i}`,
      scene: `s${i}`,
      weight: 1,
      taskType: null,
      kind: 'route',
      text,
      description: text,
      label: docs ? 'mneme' : 'dokimasia',
    });
  }
  return out;
}

describe('the routing head adapts the prior to the player’s history', () => {
  const { base, encode } = smallBase(4096, 32);
  const prior = new RoutePrior(base.spec.specialists);
  const route = (inf: Inference | null, text: string): Agent => {
    const logits = prior.score(text).logits;
    const p = inf
      ? inf.route(encode(text), 0, logits)[0]!
      : { agent: base.spec.specialists[softmax(logits).indexOf(Math.max(...softmax(logits)))]! };
    return p.agent;
  };

  it('where the player routes against the prior, the trained head moves the answer; where they agree, it stays', () => {
    const fresh = 'update the docs for the settings panel';
    expect(route(null, fresh)).not.toBe('mneme');
    const o = train(base, encode, {
      agent: 'hephaestus',
      kind: 'bond',
      examples: history(60),
      frozen: [],
      settings: { ...DEFAULT_SETTINGS, epochs: 30 },
    });
    if (o.status !== 'trained') throw new Error(o.reason);
    const inf = new Inference({
      agent: 'hephaestus',
      head: 'route',
      base,
      council: null,
      bond: { lora: o.lora, alpha: DEFAULT_SETTINGS.alpha, version: 1 },
    });
    expect(route(inf, fresh)).toBe('mneme');
    expect(route(inf, 'write tests for the settings panel')).toBe('dokimasia');
    expect(route(inf, 'is this citation real?')).toBe('aletheia');
    // Validation reads the description alone, and beats the prior alone on this player's scenes.
    const m = o.report.metrics.find((x) => x.kind === 'route')!;
    const priorOnly = m.baselines.find((b) => b.name === 'routing_prior')!;
    expect(m.value).toBeGreaterThan(priorOnly.value);
  });
});

/** The sample forge's routing history: its templated task descriptions, each routed to its specialist. */
function sampleForgeHistory(n: number): RouteExample[] {
  const rand = mulberry32(7);
  return Array.from({ length: n }, (_, i) => {
    const task = i % 4 === 0 ? (TASK_TYPES[i % TASK_TYPES.length] as (typeof TASK_TYPES)[number]) : pickTask(rand);
    const text = taskDescription(rand, task, 'train');
    return {
      agent: 'hephaestus' as const,
      entryId: `f${i}`,
      scene: `f${i}`,
      weight: 1,
      taskType: null,
      kind: 'route' as const,
      text,
      description: text,
      label: SPECIALIST[task],
    };
  });
}

describe('a history the prior already explains does not move the answer on tasks it never saw', () => {
  it('trained on the sample forge’s templated tasks, the head routes hand-written tasks as the prior does', () => {
    const { base, encode } = smallBase(4096, 32);
    const prior = new RoutePrior(base.spec.specialists);
    const o = train(base, encode, {
      agent: 'hephaestus',
      kind: 'bond',
      examples: sampleForgeHistory(120),
      frozen: [],
      settings: { ...DEFAULT_SETTINGS, epochs: 30 },
    });
    if (o.status !== 'trained') throw new Error(o.reason);
    const inf = new Inference({
      agent: 'hephaestus',
      head: 'route',
      base,
      council: null,
      bond: { lora: o.lora, alpha: DEFAULT_SETTINGS.alpha, version: 1 },
    });
    const rows = readFileSync(new URL('../fixtures/route/fresh2.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { text: string; label: Agent });
    let moved = 0;
    let worst = 0;
    for (const r of rows) {
      const p0 = softmax(prior.score(r.text).logits);
      const p1 = inf.route(encode(r.text), 0, prior.score(r.text).logits);
      const top0 = base.spec.specialists[p0.indexOf(Math.max(...p0))];
      if (p1[0]!.agent !== top0) moved++;
      for (const d of p1)
        worst = Math.max(worst, Math.abs(d.p - (p0[base.spec.specialists.indexOf(d.agent)] as number)));
    }
    expect(moved).toBe(0);
    expect(worst).toBeLessThan(0.1);
  });
});
