import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { kourai } from './run-bin.js';

/**
 * A memoir a Python host wrote in pydantic's lax spellings ("0.05" for a float, "yes" for a bool,
 * NaN, preference lists of any objects): every line is an entry to `verify`, `inspect` and
 * `train bond`, and the lists kourai cannot read as a pair are counted, not silently dropped.
 */
const MODEL = fileURLToPath(new URL('../fixtures/python/memoir_model.py', import.meta.url));
const q = JSON.stringify;

const AFFINITY = ['"0.05"', '" 0.02 "', '1', 'NaN', '"1e-2"', '-0'];
const WEIGHT = ['"1"', '1', 'true', '"2.0"'];
const SPLIT = [
  '{"shared_eligible":"yes","private_only":0}',
  '{"shared_eligible":1}',
  '{"shared_eligible":"true","private_only":"off"}',
  '{"shared_eligible":1.0,"private_only":"n"}',
];
const CONTEXT = ['{"task_type":"refactor","host":"py-host-1","n":1.0}', '{"task_type":7}', 'null', '{"x":Infinity}'];

/** 48 lines; every fourth list has three items and every fourth has string scores: 24 unread. */
function laxMemoir(): { text: string; unread: number } {
  const lines: string[] = [];
  let unread = 0;
  for (let i = 0; i < 48; i++) {
    const prop = `return the value after the loop ${i}`;
    const rev = `return early when the list is empty ${i}`;
    let pp: string;
    switch (i % 4) {
      case 0:
        pp = `[{"text":${q(prop)},"score":0.0,"rater":"h${i}"},{"text":${q(rev)},"score":1.0}]`;
        break;
      case 1:
        pp = `[{"score":0,"text":${q(prop)}},{"score":1,"text":${q(rev)}}]`;
        break;
      case 2:
        pp = `[{"text":${q(prop)},"score":0},{"text":${q(rev)},"score":1},{"text":"third","score":0.5}]`;
        unread++;
        break;
      default:
        pp = `[{"text":${q(prop)},"score":"0"},{"text":${q(rev)},"score":"1"}]`;
        unread++;
    }
    lines.push(
      `{"scene_id":"session-${(i >> 2).toString(16).padStart(8, '0')}.turn-${i % 4}","agent":"techne","source":"specialist_proposed",` +
        `"context":${CONTEXT[i % 4]},"narrative_beat":null,"agent_proposed":${q(prop)},` +
        `"player_response":{"kind":"modified","delta":${q(rev)},"extra":1},"affinity_delta":${AFFINITY[i % 6]},` +
        `"training_label":{"preference_pair":${pp},"weight":${WEIGHT[i % 4]}},"split":${SPLIT[i % 4]}}`,
    );
  }
  return { text: `${lines.join('\n')}\n`, unread };
}

let home: string;
let file: string;
let unread: number;
let bytes: Buffer;
beforeAll(() => {
  assertBuilt();
  home = tempDir('kourai-e2e-lax-');
  mkdirSync(join(home, 'host'));
  file = join(home, 'host', 'memoir.jsonl');
  const m = laxMemoir();
  unread = m.unread;
  writeFileSync(file, m.text);
  bytes = readFileSync(file);
});
afterAll(() => removeDir(home));

describe("a Python host's lax spellings, end to end", { timeout: 120_000 }, () => {
  it('pydantic accepts every line of the fixture (when it is installed)', (ctx) => {
    const r = spawnSync('python3', [MODEL], { input: bytes, encoding: 'utf8' });
    if (r.status !== 0) ctx.skip(true, `pydantic is not available: ${r.stderr.trim().split('\n').pop() ?? ''}`);
    const verdicts = r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l.replace(/\bInfinity\b|\bNaN\b/g, 'null')) as { ok: boolean }).ok);
    expect(verdicts).toEqual(new Array(48).fill(true));
  });

  it('memoir verify: every line is an entry', () => {
    const v = kourai(['memoir', 'verify', '--memoir', file, '--json'], { home });
    expect(v.code, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, entries: 48, errors: 0 });
  });

  it('memoir inspect: lists all 48, with the values pydantic holds', () => {
    const r = kourai(['memoir', 'inspect', '--memoir', file, '--json', '--limit', '100'], { home });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      total: number;
      entries: { affinity_delta: number | null; split: { shared_eligible: boolean }; training_label: unknown }[];
    };
    expect(out.total).toBe(48);
    expect(out.entries[0]?.affinity_delta).toBe(0.05);
    expect(out.entries[0]?.split.shared_eligible).toBe(true);
    expect(out.entries.map((e) => e.training_label)).toContainEqual({
      preference_pair: [
        { text: 'return the value after the loop 2', score: 0 },
        { text: 'return early when the list is empty 2', score: 1 },
        { text: 'third', score: 0.5 },
      ],
      weight: 1,
    });
  });

  it('train bond: trains on the pairs it reads and counts the lists it does not', () => {
    const t = kourai(['train', 'bond', '--agent', 'techne', '--memoir', file, '--epochs', '2', '--json'], { home });
    expect(t.code, t.stderr).toBe(0);
    const agent = (
      JSON.parse(t.stdout) as {
        agents: { status: string; unused: Record<string, number>; examples: { byKind: Record<string, number> } }[];
      }
    ).agents[0];
    expect(agent?.status).toBe('trained');
    expect(agent?.unused.preference_list_not_a_pair).toBe(unread);
    expect(agent?.examples.byKind.pair).toBe(48 - unread);
    const text = kourai(['train', 'bond', '--agent', 'techne', '--memoir', file, '--epochs', '1'], { home });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `${unread} preference lists not read (not two items with a text and a numeric score)`,
    );
    // the memoir itself is never rewritten
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });
});
