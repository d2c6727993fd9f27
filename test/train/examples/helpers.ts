import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendLines } from '../../../src/memoir/file/append.js';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { strictSplit } from '../../../src/memoir/format/split-rule.js';
import { openIndex } from '../../../src/memoir-index/memoir-index.js';
import type { ExampleSource } from '../../../src/train/examples/views.js';
import { tempDir } from '../../helpers/ctx.js';

let n = 0;

/** A stored kourai entry with defaults; `split` follows the strict rule unless given. */
export function ent(e: Partial<MemoirEntry> & Pick<MemoirEntry, 'scene_id' | 'agent'>): MemoirEntry {
  n += 1;
  const base = {
    source: 'specialist_proposed',
    context: { task_type: 'code', transcript_hash: 'sha256:00', preceding_agents: [] },
    narrative_beat: null,
    agent_proposed: null,
    player_response: null,
    affinity_delta: 0,
    training_label: null,
    entry_id: `T${String(n).padStart(5, '0')}`,
    recorded_at: new Date(Date.UTC(2026, 9, 1, 9) + n * 60_000).toISOString(),
    ...e,
  } as MemoirEntry;
  const entry_type = base.entry_type ?? (base.source === 'agent_interrupt' ? 'interrupt' : 'pipeline_turn');
  return { ...base, entry_type, split: e.split ?? strictSplit({ ...base, entry_type }) };
}

export interface Indexed extends ExampleSource {
  dir: string;
  close(): void;
}

/** Writes the entries as memoirs (one file per list) and indexes them. */
export function indexed(...memoirs: readonly MemoirEntry[][]): Indexed {
  const dir = tempDir('kourai-examples-');
  const paths = memoirs.map((entries, i) => {
    const p = join(dir, 'projects', 'p', 'proj', '.kourai', 'forges', `s${i}`, 'memoir.jsonl');
    mkdirSync(join(p, '..'), { recursive: true });
    if (entries.length === 0) writeFileSync(p, '');
    else
      appendLines(
        p,
        entries.map((e) => encodeEntry(e)),
        { fsync: false },
      );
    return p;
  });
  const index = openIndex(dir);
  const files = index.update(paths).map((u) => u.fileId);
  return { index, files, dir, close: () => index.close() };
}

/** Indexes lines already encoded (e.g. the sample forge). */
export function indexedLines(lines: readonly string[][]): Indexed {
  const dir = tempDir('kourai-examples-');
  const paths = lines.map((ls, i) => {
    const p = join(dir, 'projects', 'p', 'proj', '.kourai', 'forges', `s${i}`, 'memoir.jsonl');
    mkdirSync(join(p, '..'), { recursive: true });
    appendLines(p, ls, { fsync: false });
    return p;
  });
  const index = openIndex(dir);
  const files = index.update(paths).map((u) => u.fileId);
  return { index, files, dir, close: () => index.close() };
}
