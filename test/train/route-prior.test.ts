import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/memoir/format/agents.js';
import { SPECIALISTS } from '../../src/train/base-spec.js';
import { softmax } from '../../src/train/objectives.js';
import { RoutePrior, stem, stems } from '../../src/train/route-prior/prior.js';
import { SPECIALIST_ROLES } from '../../src/train/route-prior/roles.js';

const prior = new RoutePrior(SPECIALISTS);
const top = (text: string, taskType: string | null = null): { agent: Agent; p: number } => {
  const p = softmax(prior.score(text, taskType).logits);
  let a = 0;
  for (let k = 1; k < p.length; k++) if ((p[k] as number) > (p[a] as number)) a = k;
  return { agent: SPECIALISTS[a] as Agent, p: p[a] as number };
};

describe('the routing prior: the specialists’ written roles', () => {
  it('every specialist Hephaestus routes to has a written role, cues and task types; Hephaestus himself is no target', () => {
    for (const a of SPECIALISTS) {
      const r = SPECIALIST_ROLES[a];
      expect(r?.role, a).toMatch(/\w+ \w+/);
      expect(r?.cues.length, a).toBeGreaterThan(10);
      expect(r?.taskTypes.length, a).toBeGreaterThan(0);
    }
    expect(SPECIALISTS).not.toContain('hephaestus');
  });

  it('sends the tasks a new player types to the specialist whose craft they name', () => {
    expect(top('write tests for the parser').agent).toBe('dokimasia');
    expect(top('is this citation real?').agent).toBe('aletheia');
    expect(top('does this PR description read like AI slop?').agent).toBe('aidos');
    expect(top('fix the null pointer crash when the config file is missing').agent).toBe('techne');
    expect(top('split this feature across the team').agent).toBe('metis');
    expect(top('write the commit message for the cache change').agent).toBe('mneme');
    expect(top('the variable names here are unreadable, pick better ones').agent).toBe('kallos');
  });

  it('a task with no cue leans, weakly, to Techne; the host’s task type counts when it names a craft', () => {
    const none = top('zorblat the frobnicator');
    expect(none.agent).toBe('techne');
    expect(none.p).toBeLessThan(0.4);
    expect(top('zorblat the frobnicator', 'test').agent).toBe('dokimasia');
    expect(top('zorblat the frobnicator', 'Fact-Check').agent).toBe('aletheia');
    expect(top('zorblat the frobnicator', 'no such type').agent).toBe('techne');
    expect(prior.score('zorblat', 'slop_review').hits).toEqual([
      { agent: 'aidos', cue: 'task type: slop_review', weight: 4 },
    ]);
  });

  it('reads inflections and typos as the cue word, but not a different word one letter away', () => {
    expect(stems('Testing tested tests')).toEqual(['test', 'test', 'test']);
    expect(stem('citations')).toBe(stem('citation'));
    expect(prior.score('implment the thing').hits.map((h) => h.cue)).toContain('implement');
    expect(prior.score('writ tests for teh new sorting funtion').hits.map((h) => h.cue)).toEqual(
      expect.arrayContaining(['test', 'function']),
    );
    expect(prior.score('a changelog entry').hits.map((h) => h.cue)).not.toContain('retry');
  });

  it('counts a word once per specialist: inside a longer cue it is not a cue again', () => {
    const hits = prior.score('write the commit message').hits.filter((h) => h.agent === 'mneme');
    expect(hits.map((h) => h.cue)).toEqual(['commit message']);
    // A one-letter change is a typo only in long words: "server" is not "semver".
    expect(prior.score('the server answers 429').hits.map((h) => h.cue)).not.toContain('semver');
  });

  it('words that name the material count less when another specialist is asked for outright', () => {
    const t = 'can u add a regression test for the bug where empty strings crash the tokenizer';
    expect(top(t).agent).toBe('dokimasia');
    const bug = prior.score(t).hits.find((h) => h.cue === 'bug')!;
    expect(bug.weight).toBeLessThan(SPECIALIST_ROLES.techne!.cues.find(([c]) => c === 'bug')![1]);
    // With no one else asked for, the same words keep their weight.
    const alone = prior.score('the bug where empty strings crash the tokenizer').hits.find((h) => h.cue === 'bug')!;
    expect(alone.weight).toBe(SPECIALIST_ROLES.techne!.cues.find(([c]) => c === 'bug')![1]);
    expect(top('does this commit message sound like it was written by an LLM?').agent).toBe('aidos');
  });

  it('counts a cue once, and cues that stem alike once', () => {
    const once = prior.score('test test test');
    const twice = prior.score('format formatting');
    expect(once.hits.filter((h) => h.cue === 'test')).toHaveLength(1);
    expect(twice.hits.filter((h) => h.agent === 'kallos')).toHaveLength(1);
  });

  it('stays sure of little on the hand-written tuning tasks it was tuned on: right at least 90%, and seldom sure and wrong', () => {
    const rows = readFileSync(new URL('../fixtures/route/tasks.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { text: string; label: Agent; part: string })
      .filter((r) => r.part === 'tuning');
    expect(rows.length).toBeGreaterThan(100);
    let right = 0;
    let sureWrong = 0;
    for (const r of rows) {
      const t = top(r.text);
      if (t.agent === r.label) right++;
      else if (t.p >= 0.9) sureWrong++;
    }
    expect(right / rows.length).toBeGreaterThanOrEqual(0.9);
    expect(sureWrong / rows.length).toBeLessThanOrEqual(0.05);
  });
});
