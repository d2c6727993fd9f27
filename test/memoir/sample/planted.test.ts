import { describe, expect, it } from 'vitest';
import {
  AXIS_INFO,
  axisOf,
  CRAFT_PREFERENCES,
  PERSONAL_PREFERENCES,
  type PreferenceId,
} from '../../../src/memoir/sample/planted/catalogue.js';
import { heldOutPairs } from '../../../src/memoir/sample/planted/held-out.js';
import {
  heldPoles,
  NAMED_PROFILES,
  parsePreferences,
  profileFor,
} from '../../../src/memoir/sample/planted/profiles.js';
import { isVocabularyWord } from '../../../src/memoir/sample/planted/pseudo-words.js';
import { SPECIALIST, TASK_TYPES } from '../../../src/memoir/sample/planted/tasks.js';
import { synthSessions } from '../../../src/memoir/sample/synth.js';

const ALL: PreferenceId[] = [...PERSONAL_PREFERENCES, ...CRAFT_PREFERENCES];

interface Line {
  scene_id: string;
  agent: string;
  source: string;
  agent_proposed: string | null;
  player_response: { kind: string; delta: string | null } | null;
  training_label: { preference_pair: { text: string; score: number }[] | null; weight: number } | null;
  split: { shared_eligible: boolean };
  entry_id?: string;
  likert?: number;
}

function forge(player: string, sessions = 8, seed = 7, preferences?: string): Line[] {
  const profile = profileFor(player, preferences === undefined ? undefined : parsePreferences(preferences));
  return [...synthSessions({ seed, sessions, turns: 12, profile })]
    .flatMap((s) => s.lines)
    .map((l) => JSON.parse(l) as Line);
}

/** Lower-case words of a text, camelCase and snake_case split. */
function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(Boolean);
}

/** Test-side detectors of form (independent of the renderer's code). */
const looksTyped = (code: string): boolean => /export function \w+\(\w+: /.test(code) && /\): [\w[\]]+ \{/.test(code);
const looksEarly = (code: string): boolean => /return \[\];/.test(code) && !/let result/.test(code);
const hasLeftover = (code: string): boolean =>
  /console\.log|debugger;|\/\/ const \w+Old|\/\/ expect\(|it\.only/.test(code);
const looksConventional = (msg: string): boolean => /^[a-z]+\([a-z]+\): /.test(msg);

describe('planted preferences: the sample forge', () => {
  it('same seed and player, same forge byte for byte; another player or seed, another forge', () => {
    const a = [...synthSessions({ seed: 7, sessions: 3, turns: 12, profile: profileFor('ariadne') })].flatMap(
      (s) => s.lines,
    );
    const b = [...synthSessions({ seed: 7, sessions: 3, turns: 12, profile: profileFor('ariadne') })].flatMap(
      (s) => s.lines,
    );
    expect(b.join('\n')).toBe(a.join('\n'));
    const c = [...synthSessions({ seed: 7, sessions: 3, turns: 12, profile: profileFor('daedalus') })].flatMap(
      (s) => s.lines,
    );
    const d = [...synthSessions({ seed: 8, sessions: 3, turns: 12, profile: profileFor('ariadne') })].flatMap(
      (s) => s.lines,
    );
    expect(c.join('\n')).not.toBe(a.join('\n'));
    expect(d.join('\n')).not.toBe(a.join('\n'));
  });

  it("ariadne's revisions apply her preferences: typed signatures, early returns, no leftovers, conventional commits", () => {
    const lines = forge('ariadne');
    const revisions = lines.filter((e) => e.source === 'player_revision');
    const code = revisions.filter((e) => e.agent === 'techne').map((e) => e.agent_proposed as string);
    const commits = revisions.filter((e) => e.agent === 'mneme').map((e) => e.agent_proposed as string);
    expect(code.length).toBeGreaterThanOrEqual(10);
    expect(commits.length).toBeGreaterThanOrEqual(5);
    for (const c of code) {
      expect(looksTyped(c), c).toBe(true);
      expect(looksEarly(c), c).toBe(true);
      expect(hasLeftover(c), c).toBe(false);
    }
    for (const m of commits) expect(looksConventional(m), m).toBe(true);
  });

  it('daedalus holds other poles: his revisions are untyped and single-exit', () => {
    const code = forge('daedalus')
      .filter((e) => e.source === 'player_revision' && e.agent === 'techne')
      .map((e) => e.agent_proposed as string);
    expect(code.length).toBeGreaterThanOrEqual(10);
    for (const c of code) {
      expect(looksTyped(c), c).toBe(false);
      expect(/let result/.test(c), c).toBe(true);
      expect(hasLeftover(c), c).toBe(false);
    }
  });

  it('the player accepts proposals already in their style and pushes back on the rest', () => {
    const lines = forge('ariadne').filter(
      (e) => e.agent === 'techne' && e.source === 'specialist_proposed' && e.likert === undefined,
    );
    const inStyle = (c: string): boolean => looksTyped(c) && looksEarly(c) && !hasLeftover(c);
    const accepted = lines.filter((e) => e.player_response?.kind === 'accepted');
    const pushedBack = lines.filter(
      (e) => e.player_response?.kind === 'modified' || e.player_response?.kind === 'rejected',
    );
    expect(accepted.length).toBeGreaterThan(5);
    for (const e of accepted) expect(inStyle(e.agent_proposed as string), e.agent_proposed as string).toBe(true);
    // Some of what was pushed back is in style (noise: "not now"), most is not.
    const outOfStyle = pushedBack.filter((e) => !inStyle(e.agent_proposed as string)).length;
    expect(outOfStyle / pushedBack.length).toBeGreaterThan(0.85);
  });

  it('"always prefer the revision" is not the whole story: many pairs are choices between two agent candidates', () => {
    const pairs = forge('ariadne').filter(
      (e) => e.source === 'specialist_proposed' && e.training_label?.preference_pair,
    );
    const choices = pairs.filter((e) => e.player_response?.kind === 'accepted' && e.player_response.delta === null);
    const revisions = pairs.filter((e) => e.player_response?.kind === 'modified');
    expect(choices.length / pairs.length).toBeGreaterThan(0.2);
    expect(revisions.length / pairs.length).toBeGreaterThan(0.4);
    for (const e of choices) {
      // The chosen candidate is what the agent proposed; the other one is in the same scene, rejected.
      const [rejected, chosen] = e.training_label?.preference_pair ?? [];
      expect(chosen?.text).toBe(e.agent_proposed);
      expect(pairs.length).toBeGreaterThan(0);
      expect(rejected?.text).not.toBe(chosen?.text);
    }
  });

  it('never uses a held-out word: every pseudo-word of the forge is from the training vocabulary', () => {
    // Entry ids (ULIDs) are random letters, not words: they are left out.
    const forgeWords = new Set(
      forge('ariadne').flatMap((e) => words(JSON.stringify(e).replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, ' '))),
    );
    for (const w of forgeWords) expect(isVocabularyWord(w, 'heldOut'), w).toBe(false);
    const heldOut = new Set(
      ALL.flatMap((p) =>
        heldOutPairs(p, { seed: 1, n: 40 }).flatMap((x) => [...words(x.preferred), ...words(x.dispreferred)]),
      ),
    );
    const fresh = [...heldOut].filter((w) => isVocabularyWord(w, 'heldOut'));
    expect(fresh.length).toBeGreaterThan(100);
    for (const w of fresh) expect(forgeWords.has(w), w).toBe(false);
  });

  it('routing data: each pipeline turn has a private task description in its scene, worded for its task type', () => {
    const lines = forge('ariadne', 8);
    const routes = lines.filter(
      (e) => e.agent === 'hephaestus' && e.agent_proposed?.startsWith('route:') && e.player_response === null,
    );
    // Twelve pipeline turns a session, then one or two reading tasks (Aidos, Aletheia).
    expect(routes.length).toBeGreaterThanOrEqual(8 * 13);
    expect(routes.length).toBeLessThanOrEqual(8 * 14);
    expect(new Set(routes.map((r) => r.agent_proposed))).toEqual(
      new Set(['metis', 'techne', 'dokimasia', 'kallos', 'mneme', 'aidos', 'aletheia'].map((a) => `route:${a}`)),
    );
    for (const r of routes) {
      const desc = lines.filter((e) => e.scene_id === r.scene_id && e.source === 'task_description');
      expect(desc).toHaveLength(1);
      expect(desc[0]?.split.shared_eligible).toBe(false);
      const target = r.agent_proposed?.slice('route:'.length);
      const text = desc[0]?.agent_proposed ?? '';
      expect(/\btests?\b/.test(text), text).toBe(target === SPECIALIST.test);
    }
    // Misroutes the player overrode are there too (the routing head skips them).
    expect(lines.some((e) => e.agent_proposed?.startsWith('route:') && e.player_response?.kind === 'rejected')).toBe(
      true,
    );
  });

  it('no agent interrupts itself, and every third session is written by a Python host', () => {
    const sessions = [...synthSessions({ seed: 7, sessions: 6, turns: 12 })];
    for (const [i, s] of sessions.entries()) {
      const parsed = s.lines.map((l) => JSON.parse(l) as Line & { interrupt?: { target_agent: string } });
      expect(parsed.every((e) => e.entry_id === undefined)).toBe(i % 3 === 2);
      for (const e of parsed) if (e.interrupt) expect(e.interrupt.target_agent).not.toBe(e.agent);
    }
  });
});

describe('planted preferences: held-out evaluation pairs', () => {
  it.each(ALL)(
    '%s: same seed same pairs; the two sides differ; length says nothing (prefer-shorter near chance)',
    (pref) => {
      const a = heldOutPairs(pref, { seed: 5, n: 400 });
      expect(heldOutPairs(pref, { seed: 5, n: 400 })).toEqual(a);
      expect(heldOutPairs(pref, { seed: 6, n: 5 })).not.toEqual(a.slice(0, 5));
      expect(a).toHaveLength(400);
      for (const p of a) {
        expect(p.preferred).not.toBe(p.dispreferred);
        expect(AXIS_INFO[axisOf(pref).axis].agents).toContain(p.agent);
      }
      const shorter = a.filter((p) => p.preferred.length < p.dispreferred.length).length / a.length;
      expect(shorter).toBeGreaterThan(0.4);
      expect(shorter).toBeLessThan(0.6);
    },
  );

  it('the preferred side is in the preference form (test-side detectors)', () => {
    for (const p of heldOutPairs('typed-signatures', { seed: 2, n: 50 })) {
      expect(looksTyped(p.preferred)).toBe(true);
      expect(looksTyped(p.dispreferred)).toBe(false);
    }
    for (const p of heldOutPairs('early-returns', { seed: 2, n: 50 })) {
      expect(looksEarly(p.preferred)).toBe(true);
      expect(looksEarly(p.dispreferred)).toBe(false);
    }
    for (const p of heldOutPairs('no-leftovers', { seed: 2, n: 50 })) {
      expect(hasLeftover(p.preferred)).toBe(false);
      expect(hasLeftover(p.dispreferred)).toBe(true);
    }
    for (const p of heldOutPairs('plain-commits', { seed: 2, n: 50 })) {
      expect(looksConventional(p.preferred)).toBe(false);
      expect(looksConventional(p.dispreferred)).toBe(true);
    }
  });

  it('rejects an unknown preference', () => {
    expect(() => heldOutPairs('tabs' as PreferenceId, { seed: 1, n: 1 })).toThrow(/unknown preference "tabs"/);
  });
});

describe('planted preferences: player profiles', () => {
  it('named players get the documented preferences; every player holds the craft', () => {
    expect(profileFor('ariadne').preferences).toEqual(['early-returns', 'typed-signatures', 'conventional-commits']);
    expect(profileFor('daedalus').preferences).toEqual([...(NAMED_PROFILES.daedalus ?? [])]);
    expect(profileFor('icarus').origin).toBe('named');
    for (const p of ['ariadne', 'zephyr', 'someone-else']) expect(profileFor(p).craft).toEqual(CRAFT_PREFERENCES);
    expect(heldPoles(profileFor('ariadne'))).toEqual({ guard: 0, types: 0, commits: 0, leftovers: 0, citations: 0 });
  });

  it('any other name gets three preferences on three different axes, seeded from the name', () => {
    const z = profileFor('zephyr');
    expect(z.origin).toBe('hashed');
    expect(z.preferences).toHaveLength(3);
    expect(new Set(z.preferences.map((p) => axisOf(p).axis)).size).toBe(3);
    expect(profileFor('zephyr')).toEqual(z);
    const many = new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => profileFor(n).preferences.join()));
    expect(many.size).toBeGreaterThan(4);
  });

  it('--preferences: known personal poles, one per axis, or none', () => {
    expect(parsePreferences('typed-signatures, early-returns')).toEqual(['early-returns', 'typed-signatures']);
    expect(parsePreferences('none')).toEqual([]);
    expect(profileFor('ariadne', parsePreferences('short-names')).preferences).toEqual(['short-names']);
    expect(() => parsePreferences('early-returns,tabs')).toThrow(/unknown preference "tabs"/);
    expect(() => parsePreferences('early-returns,single-exit')).toThrow(/opposite poles of one axis \(guard\)/);
    expect(() => parsePreferences('no-leftovers')).toThrow(/craft, which every player holds/);
  });

  it('every task type routes to a specialist that exists', () => {
    expect(TASK_TYPES.map((t) => SPECIALIST[t])).toEqual([
      'metis',
      'techne',
      'dokimasia',
      'kallos',
      'mneme',
      'aidos',
      'aletheia',
    ]);
  });
});
