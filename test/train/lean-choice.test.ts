import { describe, expect, it } from 'vitest';
import { resolveLean, signalOf, type CouncilValidation } from '../../src/train/applied-lean.js';
import { chooseLean, clearlyBetter, MIN_TASK_TYPE_EXAMPLES, signTail } from '../../src/train/lean-choice.js';

/** A judge from per-lean answer sheets (1 right, 0 wrong). */
const judgeOf = (sheets: Record<number, string>) => (lean: number) =>
  [...(sheets[lean] ?? sheets[0]!)].map((c) => c === '1');

describe('chooseLean', () => {
  it('keeps the bond alone unless a candidate is right on clearly more of the same examples', () => {
    const ex = Array.from({ length: 20 }, () => ({ taskType: null }));
    // Noise: the council gets different examples right, as many as the bond does.
    const noise = chooseLean(
      ex,
      judgeOf({
        0: '11111111110000000000',
        0.25: '11111111100000000001',
        0.5: '00000000001111111111',
        0.75: '00000000001111111111',
        1: '00000000001111111111',
      }),
    );
    expect(noise.overall).toMatchObject({ lean: 0, reason: 'not_better', baseline: 0, examples: 20 });
    // Worse: never chosen.
    expect(
      chooseLean(
        ex,
        judgeOf({
          0: '1'.repeat(20),
          0.5: '0'.repeat(20),
          1: '0'.repeat(20),
          0.25: '0'.repeat(20),
          0.75: '0'.repeat(20),
        }),
      ).overall.lean,
    ).toBe(0);
    // Clearly better: the mix wins 8 examples, loses none.
    const better = chooseLean(
      ex,
      judgeOf({
        0: '11111111110000000000',
        0.25: '11111111110000000000',
        0.5: '11111111111111111100',
        0.75: '11111111110000000000',
        1: '11111111110000000000',
      }),
    );
    expect(better.overall).toMatchObject({ lean: 0.5, reason: 'better' });
    expect(better.overall.scores.find((s) => s.lean === 0.5)?.accuracy).toBe(0.9);
  });

  it('one extra right answer is not evidence; the test is one-sided at 5%', () => {
    expect(clearlyBetter(1, 0)).toBe(false);
    expect(clearlyBetter(4, 0)).toBe(false); // 1/16 > 5%
    expect(clearlyBetter(5, 0)).toBe(true); // 1/32
    expect(clearlyBetter(6, 3)).toBe(false);
    expect(clearlyBetter(9, 1)).toBe(true); // 11/1024
    expect(clearlyBetter(3, 9)).toBe(false);
    expect(signTail(7, 10)).toBeCloseTo(176 / 1024, 12);
  });

  it('per task type: its own choice when it has enough examples, else the agent-wide one', () => {
    const n = MIN_TASK_TYPE_EXAMPLES;
    const ex = [
      ...Array.from({ length: n }, () => ({ taskType: 'code' })),
      ...Array.from({ length: 3 }, () => ({ taskType: 'plan' })),
    ];
    const c = chooseLean(
      ex,
      judgeOf({
        0: `${'0'.repeat(n)}111`,
        1: `${'1'.repeat(n)}000`,
        0.25: `${'0'.repeat(n)}111`,
        0.5: `${'0'.repeat(n)}111`,
        0.75: `${'0'.repeat(n)}111`,
      }),
    );
    expect(c.byTaskType.code).toMatchObject({ lean: 1, reason: 'better', examples: n });
    expect(c.byTaskType.plan).toMatchObject({ lean: c.overall.lean, reason: 'too_few', examples: 3 });
  });
});

describe('resolveLean: which adapters an answer uses, and why', () => {
  const validation = (bond: number | null, lean: number): CouncilValidation => ({
    bond_version: bond,
    scenes: 3,
    examples: 14,
    before: 0.9,
    passed: lean > 0,
    choice: {
      overall: {
        lean,
        examples: 14,
        baseline: 0,
        reason: lean > 0 ? 'better' : 'not_better',
        scores: [
          { lean: 0, accuracy: 0.93 },
          { lean: 0.5, accuracy: 0.5 },
          { lean: 1, accuracy: 0.5 },
        ],
      },
      byTaskType: {},
    },
  });
  const council = (v: CouncilValidation | null) => ({ version: 1, metrics: { strategy: 'fedavg', validation: v } });

  it('a council version that failed validation with this bond is not applied; the reason names the figures', () => {
    const r = resolveLean({
      use: 'both',
      taskType: null,
      council: council(validation(2, 0)),
      bond: { version: 2, metrics: {} },
    });
    expect(r).toMatchObject({ lean: 0, source: 'validation', bond: { version: 2, weight: 1 }, council: null });
    expect(r.why).toBe(
      'council v1 did not beat your bond on 14 held-out examples of yours in 3 scenes: bond only 93% · both 50% · council only 50%',
    );
  });

  it('one that passed is applied at its lean', () => {
    expect(
      resolveLean({
        use: 'both',
        taskType: null,
        council: council(validation(2, 0.5)),
        bond: { version: 2, metrics: {} },
      }),
    ).toMatchObject({ lean: 0.5, source: 'validation', council: { version: 1, weight: 1 } });
  });

  it('a flag or a configured lean wins; --use wins over both', () => {
    const rows = { council: council(validation(2, 0)), bond: { version: 2, metrics: {} } };
    expect(resolveLean({ use: 'both', taskType: null, flag: 0.75, ...rows })).toMatchObject({
      lean: 0.75,
      source: 'flag',
      bond: { weight: 0.5 },
      council: { weight: 1 },
    });
    expect(resolveLean({ use: 'both', taskType: 'code', configured: 0.2, ...rows })).toMatchObject({
      lean: 0.2,
      source: 'config',
    });
    expect(resolveLean({ use: 'council', taskType: null, flag: 0, ...rows })).toMatchObject({ lean: 1, source: 'use' });
  });

  it('a newer bond: trained over this council → both as trained; otherwise the council is not applied unmeasured', () => {
    expect(
      resolveLean({
        use: 'both',
        taskType: null,
        council: council(validation(2, 0)),
        bond: { version: 3, metrics: { council_version: 1 } },
      }),
    ).toMatchObject({ lean: 0.5, source: 'trained_over' });
    expect(
      resolveLean({
        use: 'both',
        taskType: null,
        council: council(null),
        bond: { version: 3, metrics: { council_version: null } },
      }),
    ).toMatchObject({ lean: 0, source: 'unvalidated', council: null });
    // Failed with an older bond: still not applied, and said so.
    const failed = resolveLean({
      use: 'both',
      taskType: null,
      council: council(validation(2, 0)),
      bond: { version: 3, metrics: { council_version: null } },
    });
    expect(failed).toMatchObject({ lean: 0, source: 'validation', council: null });
    expect(failed.why).toBe('council v1 did not help on your held-out scenes (measured with bond v2): not applied');
    expect(
      resolveLean({ use: 'both', taskType: null, council: council(validation(null, 0)), bond: null }),
    ).toMatchObject({ lean: 0, council: null, bond: null });
    expect(
      resolveLean({ use: 'both', taskType: null, council: null, bond: { version: 3, metrics: {} } }),
    ).toMatchObject({ lean: 0, source: 'no_council' });
  });

  it('signal to noise: ‖Δ‖ ≈ noise is ≈ 0', () => {
    expect(signalOf(2942, 2941, 1).snr).toBeLessThan(0.03);
    expect(signalOf(5, 3, 4).snr).toBeCloseTo(4 / 3, 12);
    expect(signalOf(null, 3, 1).snr).toBeNull();
  });
});
