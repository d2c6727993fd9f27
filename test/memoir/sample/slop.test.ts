import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FAMILIES_PER_FORGE,
  HELD_OUT_SHARE,
  SLOP_FAMILIES,
  slopFamiliesOf,
  slopProbe,
  slopShard,
  slopSplit,
} from '../../../src/memoir/sample/planted/slop.js';
import { synthSessions } from '../../../src/memoir/sample/synth.js';

describe('slop for Aidos: a held-out vocabulary', () => {
  it('splits every family into training and held-out phrases: a partition, a quarter held out, no held-out phrase inside a training one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        const { training, heldOut } = slopSplit(seed);
        const train = new Set(training.map((p) => p.text));
        expect(heldOut.some((p) => train.has(p.text))).toBe(false);
        expect(new Set([...train, ...heldOut.map((p) => p.text)]).size).toBe(training.length + heldOut.length);
        SLOP_FAMILIES.forEach((_, f) => {
          const h = heldOut.filter((p) => p.family === f).length;
          const t = training.filter((p) => p.family === f).length;
          expect(h).toBe(Math.ceil((h + t) * HELD_OUT_SHARE));
          expect(t).toBeGreaterThan(h);
        });
        for (const p of heldOut) expect(training.some((q) => q.text.includes(p.text))).toBe(false);
      }),
      { numRuns: 25 },
    );
  });

  it('no held-out phrase and no probe passage appears anywhere in any forge’s memoir; a forge writes only its own families', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 1, max: 3 }),
        (seed, k, sessions) => {
          const shard = slopShard(seed, k, 6);
          const text = [...synthSessions({ seed: seed * 1000 + k, sessions, turns: 3, slop: shard })]
            .flatMap((s) => s.lines)
            .join('\n');
          const { heldOut, training } = slopSplit(seed);
          for (const p of heldOut) expect(text.includes(p.text)).toBe(false);
          for (const p of slopProbe(seed, 16)) expect(text.includes(p.text)).toBe(false);
          const mine = new Set(slopFamiliesOf(seed, k));
          expect(mine.size).toBe(FAMILIES_PER_FORGE);
          for (const p of training) if (!mine.has(p.family)) expect(text.includes(p.text)).toBe(false);
          // six reviews a session, about half of them slop (a phrase of the forge's families)
          const calls = text.split('\n').filter((l) => l.includes('"agent":"aidos"') && l.includes('Slop check:'));
          expect(calls).toHaveLength(6 * sessions);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('the probe: half slop, every family in turn, each slop passage carrying one held-out phrase and each clean one none', () => {
    const seed = 11;
    const { heldOut, training } = slopSplit(seed);
    const probe = slopProbe(seed, 32);
    expect(probe.filter((p) => p.slop)).toHaveLength(16);
    const familiesSeen = new Set<number>();
    for (const p of probe) {
      const hits = heldOut.filter((h) => p.text.includes(h.text));
      expect(hits).toHaveLength(p.slop ? 1 : 0);
      for (const h of hits) familiesSeen.add(h.family);
      expect(training.some((t) => p.text.includes(t.text))).toBe(false);
    }
    expect(familiesSeen.size).toBe(SLOP_FAMILIES.length);
    expect(slopProbe(seed, 32)).toEqual(probe);
  });

  it('is off by default: a session with slop reviews is the session without them, then the reviews', () => {
    const plain = [...synthSessions({ seed: 9, sessions: 3, turns: 6 })];
    const slop = [...synthSessions({ seed: 9, sessions: 3, turns: 6, slop: slopShard(9, 2, 4) })];
    expect(plain.flatMap((s) => s.lines).some((l) => l.includes('Slop check:'))).toBe(false);
    plain.forEach((s, i) => {
      const withSlop = slop[i]?.lines ?? [];
      expect(withSlop.slice(0, s.lines.length)).toEqual(s.lines);
      // each review: the task, Hephaestus's route, Aidos's call
      expect(withSlop.length - s.lines.length).toBe(4 * 3);
    });
  });
});
