import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { indexPath, openIndex } from '../../src/memoir-index/memoir-index.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

/**
 * An index is a cache of what the reading rule made of each line. When the rule comes to take lines
 * it refused (an extension value kourai cannot read), an index built before must read those memoirs
 * again: otherwise `inspect` and `train` keep skipping lines the memoir holds as entries.
 */
const clean =
  '{"scene_id":"s.turn-1","agent":"metis","source":"specialist_proposed","context":null,"narrative_beat":null,"agent_proposed":"plan","player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":true,"private_only":false}}';
const unreadable = clean.replace('}}', '},"likert":9}').replace('turn-1', 'turn-2');

let home: string;
let path: string;
beforeEach(() => {
  home = tempDir();
  path = join(home, 'memoir.jsonl');
  writeFileSync(path, `${clean}\n${unreadable}\n`);
});
afterEach(() => removeDir(home));

/** Makes the index look as one built when the line with `"likert": 9` was refused (schema version 3). */
function asBuiltByTheOldRule(): void {
  const db = new Database(indexPath(home));
  const row = db.prepare('SELECT seq, file_id, offset, length FROM entries WHERE line = 2').get() as {
    seq: number;
    file_id: number;
    offset: number;
    length: number;
  };
  db.prepare('DELETE FROM entries_fts WHERE rowid = ?').run(row.seq);
  db.prepare('DELETE FROM entries WHERE seq = ?').run(row.seq);
  db.prepare('INSERT INTO problems (file_id, line, offset, length, kind, message) VALUES (?, 2, ?, ?, ?, ?)').run(
    row.file_id,
    row.offset,
    row.length,
    'schema',
    'likert: Too big: expected number to be <=5',
  );
  db.pragma('user_version = 3');
  db.close();
}

describe('an index built under an older reading rule', () => {
  it('reads again the memoirs where it refused a line, and the line is an entry', () => {
    const first = openIndex(home);
    const [u] = first.update([path]);
    const fileId = u?.fileId as number;
    expect(first.query({ files: [fileId] })).toHaveLength(2);
    first.close();

    asBuiltByTheOldRule();
    const old = new Database(indexPath(home), { readonly: true });
    expect((old.prepare('SELECT count(*) AS n FROM entries').get() as { n: number }).n).toBe(1);
    old.close();

    const index = openIndex(home);
    try {
      index.update([path]);
      const rows = index.query({ files: [fileId] });
      expect(rows.map((r) => r.scene_id).sort()).toEqual(['s.turn-1', 's.turn-2']);
      expect(rows.find((r) => r.scene_id === 's.turn-2')).toMatchObject({
        shareable: 0,
        split_reason: 'unread_extension',
      });
      expect(index.problems([fileId])).toEqual([]);
      expect(index.integrityEvents([path])).toEqual([]); // read again, not a change to the memoir
    } finally {
      index.close();
    }
  });
});
