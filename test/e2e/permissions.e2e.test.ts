import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';
import { unprivileged, type Unprivileged } from '../helpers/unprivileged.js';

/**
 * Exit 3 on an unwritable directory, checked where it can happen: the real binary run by a user
 * that permissions apply to (as root, CI's user, it runs as `nobody`).
 */
let u: Unprivileged;
beforeAll(() => assertBuilt());
beforeEach(() => {
  u = unprivileged();
});
afterEach(() => removeDir(u.base));

const entry = JSON.stringify({ scene_id: 'session-00000000.turn-0', agent: 'metis', source: 'specialist_proposed' });

describe('an unwritable directory', () => {
  it('memoir append into it: exit 3, one line naming the path, nothing written', () => {
    const ro = join(u.base, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    // the precondition, observed as that user: it can reach and list the directory but not write in it
    expect(u.probe(`fs.accessSync(${JSON.stringify(ro)}, fs.constants.R_OK | fs.constants.X_OK)`).code).toBe(0);
    expect(u.probe(`fs.accessSync(${JSON.stringify(ro)}, fs.constants.W_OK)`).code).not.toBe(0);
    for (const target of [join(ro, 'memoir.jsonl'), ro]) {
      const r = u.run(['memoir', 'append', '--memoir', target, entry]);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr.split('\n')[0]).toMatch(/^kourai: .*permission denied/i);
      expect(r.stderr).toContain(ro);
      expect(r.stdout).toBe('');
    }
    expect(readdirSync(ro)).toEqual([]);
    // and the same command in a directory it may write succeeds, so the refusal above was the permission
    const ok = u.run(['memoir', 'append', '--memoir', join(u.home, 'memoir.jsonl'), entry]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(join(u.home, 'memoir.jsonl'))).toBe(true);
  });
});
