import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedId } from '../../src/memoir/format/entry-id.js';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { kourai } from './run-bin.js';

/**
 * `memoir show --json` gives `line`: the entry's line exactly as the memoir file holds it (without
 * its line ending). The memoir is written by Python: the upstream pydantic model's
 * `model_dump_json()`, and a host that adds keys of its own with `json.dumps` (which pydantic
 * ignores on reading). Neither a float's spelling (`1.0`) nor the absence of `entry_id` may change.
 */
const REF = dirname(fileURLToPath(new URL('../fixtures/python/memoir_ref.py', import.meta.url)));
const WRITER = `
import json, sys
sys.path.insert(0, sys.argv[1])
from memoir_ref import MemoirEntry, PlayerResponse
base = dict(scene_id="session-0000beef.turn-1", agent="techne", source="specialist_proposed",
            context={"task_type": "code", "score": 1.0}, agent_proposed="return x",
            player_response=PlayerResponse(kind="modified", delta="déjà vu", felt=None), affinity_delta=1.0)
plain = MemoirEntry(**base).model_dump_json()
hosted = json.dumps({**MemoirEntry(**{**base, "scene_id": "session-0000beef.turn-2"}).model_dump(mode="json"),
                     "host": "py-host-1", "host_score": 1.0, "trace": {"a": 1.0, "b": [2.5, 1e-07]}},
                    ensure_ascii=False, separators=(",", ":"))
windows = MemoirEntry(**{**base, "scene_id": "session-0000beef.turn-3"}).model_dump_json()
with open(sys.argv[2], "w", encoding="utf-8", newline="") as f:
    f.write(plain + "\\n" + hosted + "\\n" + windows + "\\r\\n")
`;

const probe = spawnSync('python3', ['-c', 'import pydantic; print(pydantic.VERSION)'], { encoding: 'utf8' });
const havePydantic = probe.status === 0;
const missing = `memoir show's line was NOT checked on a Python-written memoir: python3 cannot import pydantic (${(probe.error?.message ?? probe.stderr.trim().split('\n').pop() ?? '').trim() || `exit ${probe.status}`})`;

interface ShowJson {
  entry: Record<string, unknown> & { entry_id: string };
  line: string;
  resolved_from: string | null;
}

let home: string;
let file: string;
/** The file's lines as stored, each without its line ending. */
let stored: string[];

function show(id: string): ShowJson {
  const r = kourai(['memoir', 'show', id, '--memoir', file, '--json'], { home });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as ShowJson;
}

beforeAll(() => {
  assertBuilt();
  home = tempDir('kourai-e2e-show-line-');
  mkdirSync(join(home, 'host'));
  file = join(home, 'host', 'memoir.jsonl');
  if (!havePydantic) return;
  const w = spawnSync('python3', ['-c', WRITER, REF, file], { encoding: 'utf8' });
  if (w.status !== 0) throw new Error(w.stderr);
  stored = readFileSync(file, 'utf8').split(/\r?\n/).slice(0, 3);
});
afterAll(() => removeDir(home));

describe("memoir show --json: line is the entry's stored line", { timeout: 120_000 }, () => {
  it('a Python line with keys of its host: the bytes as written (1.0 stays 1.0, no entry_id added)', (ctx) => {
    if (!havePydantic) ctx.skip(true, missing);
    const hosted = stored[1] as string;
    expect(hosted).toContain('"host_score":1.0,"trace":{"a":1.0,"b":[2.5,1e-07]}');
    const r = show(derivedId(hosted));
    expect(r.line).toBe(hosted);
    expect(r.entry.entry_id).toBe(derivedId(hosted));
    expect(r.entry.host_score).toBe(1);
  });

  it("pydantic's own line, and one ending in CRLF (the line without its ending)", (ctx) => {
    if (!havePydantic) ctx.skip(true, missing);
    for (const l of [stored[0], stored[2]] as string[]) expect(show(derivedId(l)).line).toBe(l);
  });

  it('a line kourai appended, and the newest revision of a superseded entry', (ctx) => {
    if (!havePydantic) ctx.skip(true, missing);
    const entry = JSON.stringify({
      scene_id: 'session-0000beef.turn-4',
      agent: 'metis',
      source: 'specialist_proposed',
    });
    const a = kourai(['memoir', 'append', entry, '--memoir', file, '--json'], { home });
    expect(a.code, a.stderr).toBe(0);
    const appended = readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string;
    const id = (JSON.parse(appended) as { entry_id: string }).entry_id;
    expect(show(id).line).toBe(appended);

    const hostedId = derivedId(stored[1] as string);
    const s = kourai(
      ['memoir', 'supersede', hostedId, '{"agent_proposed":"return y"}', '--reason', 'typo', '--memoir', file],
      { home },
    );
    expect(s.code, s.stderr).toBe(0);
    const revision = readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string;
    const r = show(hostedId);
    expect(r.resolved_from).toBe(hostedId);
    expect(r.line).toBe(revision);
  });
});
