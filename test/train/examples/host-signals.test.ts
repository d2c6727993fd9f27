import { describe, expect, it } from 'vitest';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { examplesOf, fromEntry, hostSignals, testPairs, UNREAD_SIGNAL } from '../../../src/train/examples/build.js';
import { ent } from './helpers.js';

/** Context keys a host writes beside the known ones (read by the trainer when present). */
const withCtx = (e: MemoirEntry, extra: Record<string, unknown>): MemoirEntry => ({
  ...e,
  context: { task_type: 'test', ...extra } as unknown as MemoirEntry['context'],
});

describe('host signals in the context reach the trainer', () => {
  it('reads tests_passed (boolean) and coverage_delta (number); anything else is ignored', () => {
    expect(hostSignals({ task_type: 'test', tests_passed: true, coverage_delta: 2.5, host: 'py-host-1' })).toEqual({
      testsPassed: true,
      coverageDelta: 2.5,
    });
    expect(hostSignals({ tests_passed: 'yes', coverage_delta: 'up' })).toEqual({
      testsPassed: null,
      coverageDelta: null,
    });
    expect(hostSignals(null)).toEqual({ testsPassed: null, coverageDelta: null });
    expect(hostSignals([true])).toEqual({ testsPassed: null, coverageDelta: null });
  });

  it('a signal of another type is counted as not read, and the entry still gives its other examples', () => {
    const e = withCtx(ent({ scene_id: 's1', agent: 'dokimasia', agent_proposed: 'test A' }), {
      tests_passed: 'yes',
    });
    const skipped: string[] = [];
    const ex = examplesOf(fromEntry(e, null), (r) => skipped.push(r));
    expect(skipped).toContain(UNREAD_SIGNAL);
    expect(ex.every((x) => x.kind !== 'binary')).toBe(true);
    const fine: string[] = [];
    examplesOf(fromEntry(withCtx(ent({ scene_id: 's2', agent: 'dokimasia' }), { tests_passed: true }), null), (r) =>
      fine.push(r),
    );
    expect(fine).not.toContain(UNREAD_SIGNAL);
  });

  it('a proposal whose tests ran: a binary test-pass example, and a graded coverage example', () => {
    const e = withCtx(ent({ scene_id: 's1', agent: 'dokimasia', agent_proposed: "it('parses', () => {})" }), {
      tests_passed: false,
      coverage_delta: 4,
    });
    const ex = examplesOf(fromEntry(e, null), () => undefined);
    expect(ex).toEqual([
      expect.objectContaining({ kind: 'binary', label: 0, text: "it('parses', () => {})" }),
      expect.objectContaining({ kind: 'graded', target: 0.7 }),
    ]);
  });

  it("Dokimasia's test pairs: in one scene, the passing proposal is preferred to each failing one", () => {
    const pass = fromEntry(
      withCtx(ent({ scene_id: 's1', agent: 'dokimasia', agent_proposed: 'test A' }), { tests_passed: true }),
      'write tests for the parser',
    );
    const fail = fromEntry(
      withCtx(ent({ scene_id: 's1', agent: 'dokimasia', agent_proposed: 'test B' }), { tests_passed: false }),
      'write tests for the parser',
    );
    const other = fromEntry(
      withCtx(ent({ scene_id: 's2', agent: 'dokimasia', agent_proposed: 'test C' }), { tests_passed: false }),
      null,
    );
    const judged = [pass, fail, other].map((fields) => ({
      fields,
      text: fields.text as string,
      passed: fields.signals.testsPassed as boolean,
      weight: 1,
    }));
    expect(testPairs(judged)).toEqual([
      expect.objectContaining({
        kind: 'pair',
        scene: 's1',
        chosen: 'test A',
        rejected: 'test B',
        chosenBy: 'choice',
        prompt: 'write tests for the parser',
      }),
    ]);
  });
});
