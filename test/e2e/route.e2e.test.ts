import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { kourai } from './run-bin.js';

/** `kourai route` on the built binary, as a new player meets it: before any history, and after the sample forge trains it. */
const TASKS: readonly [task: string, agent: string][] = [
  ['write tests for the parser', 'dokimasia'],
  ['is this citation real?', 'aletheia'],
  ['does this PR description read like AI slop?', 'aidos'],
];

let home: string;
beforeAll(() => {
  assertBuilt();
  home = tempDir('kourai-e2e-route-');
});
afterAll(() => removeDir(home));

function routed(task: string): { agent: string; p: number }[] {
  const r = kourai(['route', task, '--json'], { home });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return (JSON.parse(r.stdout) as { distribution: { agent: string; p: number }[] }).distribution;
}

describe('kourai route, end to end', { timeout: 240_000 }, () => {
  it('routes from the first session, with no adapter and no memoir', () => {
    for (const [task, agent] of TASKS) expect(routed(task)[0]!.agent, task).toBe(agent);
    const t = kourai(['route', 'is this citation real?'], { home });
    expect(t.code).toBe(0);
    expect(t.stdout.split('\n')[1]).toMatch(/^aletheia +\d\.\d{3} /);
    expect(t.stdout).toContain('base + no adapter');
    expect(t.stdout).toMatch(/prior: the specialists' written roles; cues in the task: citation → aletheia/);
  });

  it('after memoir synth and train bond, the same tasks still go to the same specialists', () => {
    expect(kourai(['memoir', 'synth', '--sessions', '4'], { home }).code).toBe(0);
    const t = kourai(['train', 'bond', '--agent', 'hephaestus', '--json'], { home });
    expect(t.code, t.stderr).toBe(0);
    const heph = (
      JSON.parse(t.stdout) as {
        agents: { agent: string; status: string; metric: { kind: string; baselines: { name: string }[] } | null }[];
      }
    ).agents[0]!;
    expect(heph).toMatchObject({ agent: 'hephaestus', status: 'trained', metric: { kind: 'route' } });
    expect(heph.metric!.baselines.map((b) => b.name)).toContain('routing_prior');
    for (const [task, agent] of TASKS) {
      const d = routed(task);
      expect(d[0]!.agent, task).toBe(agent);
    }
    const j = JSON.parse(kourai(['route', 'write tests for the parser', '--json'], { home }).stdout) as {
      adapters: { bond: number | null };
    };
    expect(j.adapters.bond).toBe(1);
  });
});
