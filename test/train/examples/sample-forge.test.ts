import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTS, FEDERATING_AGENTS } from '../../../src/memoir/format/agents.js';
import { profileFor } from '../../../src/memoir/sample/planted/profiles.js';
import { synthSessions } from '../../../src/memoir/sample/synth.js';
import type { Example } from '../../../src/train/examples/types.js';
import { bondView, councilView } from '../../../src/train/examples/views.js';
import { indexedLines, type Indexed } from './helpers.js';

/** The views on the sample forge (8 sessions of ariadne's): what `train bond` will see. */

let s: Indexed;
let lines: Record<string, unknown>[];
beforeAll(() => {
  const sessions = [...synthSessions({ seed: 7, sessions: 8, turns: 12, profile: profileFor('ariadne') })];
  s = indexedLines(sessions.map((x) => x.lines));
  lines = sessions.flatMap((x) => x.lines).map((l) => JSON.parse(l) as Record<string, unknown>);
});
afterAll(() => s.close());

const kinds = (xs: readonly Example[]): Record<string, number> =>
  xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x.kind]: (m[x.kind] ?? 0) + 1 }), {});

describe('data views on the sample forge', () => {
  it('every agent has examples of its kinds in its bond view', () => {
    const byAgent = Object.fromEntries(AGENTS.map((a) => [a, kinds(bondView(s, a).examples)]));
    expect(byAgent.hephaestus).toEqual({ route: expect.any(Number) });
    for (const a of ['techne', 'mneme', 'dokimasia'] as const)
      expect(byAgent[a]).toMatchObject({ pair: expect.any(Number), binary: expect.any(Number) });
    for (const a of ['kallos', 'aidos', 'aletheia', 'metis'] as const) expect(byAgent[a]?.binary).toBeGreaterThan(3);
    for (const a of ['cupid', 'puck'] as const) expect(Object.keys(byAgent[a] ?? {})).toEqual(['graded']);
    expect(byAgent.techne?.pair).toBeGreaterThan(25);
  });

  it('routing: the sample routes to all seven specialists; the bond reads the task without its type, the council only its type', () => {
    const bond = bondView(s, 'hephaestus').examples.filter((e) => e.kind === 'route');
    const council = councilView(s, 'hephaestus').examples.filter((e) => e.kind === 'route');
    // The README's specialists Hephaestus routes to (never himself, never Cupid or Puck), every one of them.
    expect(new Set(bond.map((e) => e.label))).toEqual(
      new Set(['metis', 'techne', 'dokimasia', 'kallos', 'mneme', 'aidos', 'aletheia']),
    );
    // No "task type:" line rides with a description: it alone would name the answer.
    expect(bond.every((e) => !e.text.includes('task type') && e.text === e.description && e.taskType !== null)).toBe(
      true,
    );
    expect(council.every((e) => /^task type: \w+$/.test(e.text))).toBe(true);
    expect(council.map((e) => e.label)).toEqual(bond.map((e) => e.label));
  });

  it('the council never sees a revision, a task description or anything private; its pairs are choices', () => {
    const secret = new Set(
      lines
        .filter(
          (l) =>
            l.source === 'player_revision' ||
            l.source === 'task_description' ||
            (l.split as { shared_eligible: boolean }).shared_eligible === false,
        )
        .map((l) => l.agent_proposed)
        .filter((t): t is string => typeof t === 'string' && t.length > 0),
    );
    let pairs = 0;
    for (const a of FEDERATING_AGENTS) {
      for (const e of councilView(s, a).examples) {
        const texts = e.kind === 'pair' ? [e.chosen, e.rejected] : [e.text];
        for (const t of texts) expect(secret.has(t), t).toBe(false);
        if (e.kind === 'pair') {
          pairs++;
          expect(e.chosenBy).toBe('choice');
        }
      }
    }
    expect(pairs).toBeGreaterThan(10);
  });

  it('"always prefer the revision" is right only on revision pairs', () => {
    const pairs = bondView(s, 'techne').examples.filter((e) => e.kind === 'pair');
    const revision = pairs.filter((e) => e.chosenBy === 'revision').length;
    expect(revision / pairs.length).toBeGreaterThan(0.4);
    expect(revision / pairs.length).toBeLessThan(0.85);
  });
});
