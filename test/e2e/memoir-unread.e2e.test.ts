import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { kourai } from './run-bin.js';

/**
 * A Python host that writes one of kourai's extension keys with a value kourai cannot read
 * (`"likert": 9`, `"entry_id": ""`). pydantic ignores keys it does not declare, so every such
 * line is an entry: `verify` warns naming the line and the key, `inspect`, `train bond`,
 * `supersede` and `append` take it, and the value is kept as written. A key no model declares is
 * ignored by pydantic: `append` and `supersede` leave it out of what they write, with a warning.
 */
const MODEL = fileURLToPath(new URL('../fixtures/python/memoir_model.py', import.meta.url));
const q = JSON.stringify;

/** Line n + 1: the extension key and value it holds, and the value as pydantic writes it. */
const UNREAD: [string, string, string][] = [
  ['likert', '9', '9'],
  ['comment', '5', '5'],
  ['entry_id', '""', '""'],
  ['recorded_at', '"yesterday"', '"yesterday"'],
  ['council', '[]', '[]'],
  ['likert', '2.50', '2.5'],
];

function line(i: number, extra: string): string {
  const prop = `return the value after the loop ${i}`;
  const rev = `return early when the list is empty ${i}`;
  return (
    `{"scene_id":"session-${i.toString(16).padStart(8, '0')}.turn-1","agent":"techne","source":"specialist_proposed",` +
    `"context":{"task_type":"code"},"narrative_beat":null,"agent_proposed":${q(prop)},` +
    `"player_response":{"kind":"modified","delta":${q(rev)},"felt":null},"affinity_delta":0.02,` +
    `"training_label":{"preference_pair":[{"text":${q(prop)},"score":0},{"text":${q(rev)},"score":1}],"weight":1.0},` +
    `"split":{"shared_eligible":true,"private_only":false}${extra}}`
  );
}

let home: string;
let file: string;
let bytes: Buffer;
beforeAll(() => {
  assertBuilt();
  home = tempDir('kourai-e2e-unread-');
  mkdirSync(join(home, 'host'));
  file = join(home, 'host', 'memoir.jsonl');
  const lines = UNREAD.map(([k, v], i) => line(i, `,${q(k)}:${v}`));
  lines.push(line(UNREAD.length, ''), line(UNREAD.length + 1, ''));
  writeFileSync(file, `${lines.join('\n')}\n`);
  bytes = readFileSync(file);
});
afterAll(() => removeDir(home));

interface VerifyJson {
  ok: boolean;
  entries: number;
  errors: number;
  problems: { line: number; kind: string; severity: string; message: string }[];
}

describe("a Python host's kourai extension kourai cannot read, end to end", { timeout: 120_000 }, () => {
  it('pydantic accepts every line of the fixture (when it is installed)', (ctx) => {
    const r = spawnSync('python3', [MODEL], { input: bytes, encoding: 'utf8' });
    if (r.status !== 0) ctx.skip(true, `pydantic is not available: ${r.stderr.trim().split('\n').pop() ?? ''}`);
    const verdicts = r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { ok: boolean }).ok);
    expect(verdicts).toEqual(new Array(UNREAD.length + 2).fill(true));
  });

  it('memoir verify: every line is an entry; one warning per unread value, naming its line and key', () => {
    const v = kourai(['memoir', 'verify', '--memoir', file, '--json'], { home });
    expect(v.code, v.stderr).toBe(0);
    const out = JSON.parse(v.stdout) as VerifyJson;
    expect(out).toMatchObject({ ok: true, entries: UNREAD.length + 2, errors: 0 });
    const unread = out.problems.filter((p) => p.kind === 'unread_extension');
    expect(unread.map((p) => [p.line, p.severity])).toEqual(UNREAD.map((_, i) => [i + 1, 'warning']));
    UNREAD.forEach(([k, , v], i) => expect(unread[i]?.message).toContain(`${k} holds ${v}`));
    const text = kourai(['memoir', 'verify', '--memoir', file], { home });
    expect(text.code, text.stderr).toBe(0);
    expect(`${text.stdout}${text.stderr}`).toContain('likert holds 9, not an integer from 1 to 5');
  });

  it('memoir inspect: lists every line; an unreadable id is derived from the line, the entries are private', () => {
    const r = kourai(['memoir', 'inspect', '--memoir', file, '--json', '--limit', '100'], { home });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      total: number;
      entries: { entry_id: string; scene_id: string; likert?: unknown; _memoir?: Record<string, unknown> }[];
    };
    expect(out.total).toBe(UNREAD.length + 2);
    const bySession = new Map(out.entries.map((e) => [e.scene_id, e]));
    expect(bySession.get('session-00000002.turn-1')?.entry_id).toMatch(/^py_[0-9A-Z]{24}$/);
    expect(bySession.get('session-00000000.turn-1')?.likert).toBeUndefined();
    expect(bySession.get('session-00000000.turn-1')?._memoir).toMatchObject({
      split_reason: 'unread_extension',
      unread: [{ key: 'likert', json: '9', why: 'not an integer from 1 to 5' }],
    });
    const stats = JSON.parse(kourai(['memoir', 'stats', '--memoir', file, '--json'], { home }).stdout) as {
      by_split_reason: { reason: string; entries: number }[];
    };
    expect(stats.by_split_reason).toContainEqual({ reason: 'unread_extension', entries: UNREAD.length });
  });

  it('train bond: learns from every line', () => {
    const t = kourai(['train', 'bond', '--agent', 'techne', '--memoir', file, '--epochs', '2', '--json'], { home });
    expect(t.code, t.stderr).toBe(0);
    const agent = (
      JSON.parse(t.stdout) as { agents: { status: string; examples: { byKind: Record<string, number> } }[] }
    ).agents[0];
    expect(agent?.status).toBe('trained');
    expect(agent?.examples.byKind.pair).toBe(UNREAD.length + 2);
  });

  it('memoir supersede: the revision keeps the unread value as written, and stays private', () => {
    const id = (
      JSON.parse(kourai(['memoir', 'inspect', '--memoir', file, '--json', '--limit', '1'], { home }).stdout) as {
        entries: { entry_id: string }[];
      }
    ).entries[0]?.entry_id as string;
    const r = kourai(
      [
        'memoir',
        'supersede',
        id,
        '{"agent_proposed":"return the value"}',
        '--reason',
        'typo',
        '--json',
        '--memoir',
        file,
      ],
      { home },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ supersedes: id, shared: false });
    const last = readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string;
    expect(last).toContain(`"supersedes":${q(id)},"revision_reason":"typo","likert":9}`);
  });

  it('memoir append: takes the value as given with a warning; an unreadable id is replaced by its own', () => {
    const entry = (extra: string) =>
      `{"scene_id":"s.turn-9","agent":"techne","source":"specialist_proposed","agent_proposed":"x"${extra}}`;
    const r = kourai(['memoir', 'append', '--memoir', file, '--json', entry(',"likert":9.0,"comment":5')], { home });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { entries: { entry_id: string; shared: boolean }[]; unread: string[] };
    expect(out.entries[0]?.shared).toBe(false);
    expect(out.unread).toEqual([
      'argument: likert holds 9, not an integer from 1 to 5: written as given, not read; the entry is private',
      'argument: comment holds 5, not a string: written as given, not read; the entry is private',
    ]);
    expect(r.stderr).toContain('likert holds 9');
    const last = readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string;
    expect(last).toMatch(/"entry_type":"pipeline_turn","likert":9,"comment":5\}$/);

    const id = kourai(['memoir', 'append', '--memoir', file, '--json', entry(',"entry_id":""')], { home });
    expect(id.code, id.stderr).toBe(0);
    const written = JSON.parse(id.stdout) as { entries: { entry_id: string; shared: boolean }[]; unread: string[] };
    expect(written.entries[0]?.entry_id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(written.entries[0]?.shared).toBe(false);
    expect(written.unread[0]).toMatch(
      /^argument: entry_id holds "", not an entry id .*: kourai writes its own entry_id instead; the entry is private$/,
    );

    // what was there is untouched; the new lines are read as the host's were
    expect(readFileSync(file).subarray(0, bytes.length).equals(bytes)).toBe(true);
    const v = JSON.parse(kourai(['memoir', 'verify', '--memoir', file, '--json'], { home }).stdout) as VerifyJson;
    expect(v).toMatchObject({ ok: true, errors: 0 });
    expect(v.problems.filter((p) => p.kind === 'unread_extension')).toHaveLength(UNREAD.length + 3);
  });

  it('memoir append: a key no model declares is left out with a warning, as pydantic leaves it out; a near miss is refused', () => {
    const before = readFileSync(file);
    const host = `{"scene_id":"s.turn-10","agent":"techne","source":"specialist_proposed","agent_proposed":"y","host":"py-host-1","trace":{"a":1.0}}`;
    const r = kourai(['memoir', 'append', '--memoir', file, '--json', host], { home });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { written: number; ignored: string[] };
    expect(out.written).toBe(1);
    expect(out.ignored).toEqual([
      'argument: key "host" is not a memoir field; left out, as the upstream model leaves it out',
      'argument: key "trace" is not a memoir field; left out, as the upstream model leaves it out',
    ]);
    expect(r.stderr).toContain('key "host" is not a memoir field');
    const last = readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string;
    expect(last).not.toMatch(/"host"|"trace"/);

    const after = readFileSync(file);
    const typo = `{"scene_id":"s.turn-11","agent":"techne","source":"specialist_proposed","agent_proposed":"z","narative_beat":"x"}`;
    const t = kourai(['memoir', 'append', '--memoir', file, typo], { home });
    expect(t.code).toBe(5);
    expect(t.stderr).toContain('argument: unknown key "narative_beat" (did you mean "narrative_beat"?)');
    expect(readFileSync(file).equals(after)).toBe(true);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
  });

  it('memoir supersede: keys no model declares in a Python line are left out of the revision with a warning, as pydantic leaves them out', () => {
    mkdirSync(join(home, 'host-extra'));
    const extraFile = join(home, 'host-extra', 'memoir.jsonl');
    const extra = ',"host":"py-host-1","host_score":1.0,"trace":{"a":1.0,"b":[2.50]}';
    const hostLines = [line(20, extra), line(21, extra)];
    writeFileSync(extraFile, `${hostLines.join('\n')}\n`);
    const original = readFileSync(extraFile);
    const ids = (
      JSON.parse(kourai(['memoir', 'inspect', '--memoir', extraFile, '--json'], { home }).stdout) as {
        entries: { entry_id: string; scene_id: string }[];
      }
    ).entries
      .sort((a, b) => a.scene_id.localeCompare(b.scene_id))
      .map((e) => e.entry_id);
    expect(ids).toHaveLength(2);
    const [first, second] = ids as [string, string];
    const ignored = (id: string) =>
      ['host', 'host_score', 'trace'].map(
        (k) => `${id}: key "${k}" is not a memoir field; left out of the revision, as the upstream model leaves it out`,
      );

    const patch = '{"agent_proposed":"return the value"}';
    const r = kourai(['memoir', 'supersede', first, patch, '--reason', 'typo', '--json', '--memoir', extraFile], {
      home,
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { supersedes: string; changed: string[]; shared: boolean; ignored: string[] };
    expect(out).toMatchObject({ supersedes: first, changed: ['agent_proposed'], shared: true });
    expect(out.ignored).toEqual(ignored(first));
    expect(r.stderr).toContain(`warning: ${ignored(first)[0] as string}`);
    let written = readFileSync(extraFile, 'utf8').trimEnd().split('\n').at(-1) as string;
    expect(written).not.toMatch(/"host"|"host_score"|"trace"/);
    expect(written).toMatch(new RegExp(`"supersedes":${q(first)},"revision_reason":"typo"\\}$`));

    // the text mode warns the same way
    const t = kourai(['memoir', 'supersede', second, patch, '--reason', 'typo', '--memoir', extraFile], { home });
    expect(t.code, t.stderr).toBe(0);
    for (const w of ignored(second)) expect(t.stderr).toContain(`warning: ${w}`);
    written = readFileSync(extraFile, 'utf8').trimEnd().split('\n').at(-1) as string;
    expect(written).not.toMatch(/"host"|"host_score"|"trace"/);

    // a correction that sets such a key is refused: nothing written
    const before = readFileSync(extraFile);
    const bad = kourai(['memoir', 'supersede', first, '{"host":"py-host-2"}', '--reason', 'r', '--memoir', extraFile], {
      home,
    });
    expect(bad.code).toBe(5);
    expect(bad.stderr).toContain('unknown key "host" in the correction');
    const after = readFileSync(extraFile);
    expect(after.equals(before)).toBe(true);
    // the host's lines are untouched, and every line is an entry
    expect(after.subarray(0, original.length).equals(original)).toBe(true);
    const v = JSON.parse(kourai(['memoir', 'verify', '--memoir', extraFile, '--json'], { home }).stdout) as VerifyJson;
    expect(v).toMatchObject({ ok: true, entries: 4, errors: 0 });
  });
});
