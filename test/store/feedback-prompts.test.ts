import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FeedbackPrompts } from '../../src/store/feedback-prompts.js';
import { openStateDb } from '../../src/store/state-db.js';
import type { DB } from '../../src/store/db.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

let home: string;
let db: DB;
beforeEach(() => {
  home = tempDir('kourai-prompts-');
  db = openStateDb(home);
});
afterEach(() => {
  db.close();
  removeDir(home);
});

describe('feedback prompt state (kourai.db, feedback_prompts)', () => {
  it('counts skips since the last answer, per forge and agent, with the anchor of the last skip', () => {
    const p = new FeedbackPrompts(db);
    const at = new Date('2026-11-22T10:00:00Z');
    expect(p.skips('forge-a', 'techne')).toBeUndefined();
    p.recordSkip('forge-a', 'techne', 'E1', at);
    expect(p.recordSkip('forge-a', 'techne', 'E2', at)).toEqual({
      count: 2,
      anchor: 'E2',
      lastSkipAt: at.toISOString(),
    });
    p.recordSkip('forge-b', 'techne', null, at);
    p.recordSkip('forge-a', 'metis', 'M1', at);
    expect(p.skips('forge-b', 'techne')).toEqual({ count: 1, anchor: null, lastSkipAt: at.toISOString() });
    p.recordAnswer('forge-a', 'techne', 'E3', at);
    expect(p.skips('forge-a', 'techne')).toBeUndefined();
    p.recordSkip('forge-a', 'techne', 'E4', at);
    expect(p.skips('forge-a', 'techne')?.count).toBe(1);
    expect(p.skips('forge-a', 'metis')?.count).toBe(1);
  });

  it('is append-only, like the rest of the state database', () => {
    new FeedbackPrompts(db).recordSkip('f', 'techne', 'E1', new Date());
    expect(() => db.prepare('DELETE FROM feedback_prompts').run()).toThrow(/append-only/);
    expect(() => db.prepare("UPDATE feedback_prompts SET outcome = 'answered'").run()).toThrow(/append-only/);
  });
});
