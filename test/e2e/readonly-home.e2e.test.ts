import { appendFileSync, chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';
import { unprivileged, type Unprivileged } from '../helpers/unprivileged.js';

/**
 * A home (or an index.db) the operator cannot write, as a user permissions
 * apply to (as root, CI's user, the binary runs as `nobody`): writing the index is a permissions
 * problem (exit 3 naming the path), and reading commands still work.
 */
let u: Unprivileged;
beforeAll(() => assertBuilt());
beforeEach(() => {
  u = unprivileged();
});
afterEach(() => removeDir(u.base));

const json = (r: { stdout: string }) => JSON.parse(r.stdout) as Record<string, unknown>;

describe('a read-only home', () => {
  it('memoir index: exit 3 naming the index; inspect, stats and verify still answer, also once a memoir grew', () => {
    const synth = u.run(['memoir', 'synth', '--json']);
    expect(synth.code).toBe(0);
    const memoirs = json(synth).memoirs as string[];
    expect(u.run(['memoir', 'index', '--json']).code).toBe(0);
    const entries = json(u.run(['memoir', 'stats', '--json'])).entries as number;
    const cache = join(u.home, 'cache');
    chmodSync(join(cache, 'index.db'), 0o444);
    chmodSync(cache, 0o555);
    chmodSync(u.home, 0o555);
    expect(u.probe(`fs.accessSync(${JSON.stringify(cache)}, fs.constants.W_OK)`).code).not.toBe(0);

    const idx = u.run(['memoir', 'index']);
    expect(idx.code, idx.stderr).toBe(3);
    expect(idx.stderr.split('\n')[0]).toBe(
      `kourai: cannot write the memoir index ${join(cache, 'index.db')}: ${cache} is not writable`,
    );

    for (const args of [
      ['memoir', 'stats', '--json'],
      ['memoir', 'inspect', '--agent', 'aidos', '--limit', '3', '--json'],
      ['memoir', 'verify', '--json'],
    ]) {
      const r = u.run(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect(json(u.run(['memoir', 'stats', '--json'])).entries).toBe(entries);

    // a memoir grew since the index was built (root may still write it): the copy is brought up to date
    const first = memoirs[0] as string;
    const line = readFileSync(first, 'utf8').split('\n')[0] as string;
    appendFileSync(first, `${line.replace(/"entry_id":"[^"]+"/, '"entry_id":"01M3VCAZ7Y3T5Q9B6HQP9WD1P1"')}\n`);
    const grown = u.run(['memoir', 'stats', '--json']);
    expect(grown.code, grown.stderr).toBe(0);
    expect(json(grown).entries).toBe(entries + 1);
    const text = u.run(['memoir', 'stats']);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain(
      `note: the memoir index ${join(cache, 'index.db')} cannot be written (${cache} is not writable): reading a temporary copy of it for this run`,
    );
  });

  it('search after a bulk load (full-text rows not built yet): answers from a temporary copy, and the same once writable', () => {
    const file = join(u.home, 'big', 'memoir.jsonl');
    expect(u.run(['memoir', 'synth', '--out', file, '--entries', '14000', '--json']).code).toBe(0); // over 8 MiB: a bulk load
    expect(u.run(['memoir', 'index', '--memoir', file, '--json']).code).toBe(0);
    const cache = join(u.home, 'cache');
    chmodSync(join(cache, 'index.db'), 0o444);
    chmodSync(cache, 0o555);
    const ro = u.run(['memoir', 'search', 'naming', 'plan', '--memoir', file, '--limit', '30']);
    expect(ro.code, ro.stderr).toBe(0);
    expect(ro.stderr).toContain('reading a temporary copy of it for this run');
    const roJson = u.run(['memoir', 'search', 'naming', 'plan', '--memoir', file, '--limit', '30', '--json']);
    expect(roJson.code, roJson.stderr).toBe(0);
    chmodSync(cache, 0o755);
    chmodSync(join(cache, 'index.db'), 0o644);
    const db = new Database(join(cache, 'index.db'), { readonly: true });
    expect(db.prepare('SELECT fts_complete FROM files').pluck().all()).toEqual([0]); // the read-only runs built theirs in the copy
    db.close();
    const rw = u.run(['memoir', 'search', 'naming', 'plan', '--memoir', file, '--limit', '30', '--json']);
    expect(rw.code, rw.stderr).toBe(0);
    const found = json(rw);
    expect(found.total as number).toBeGreaterThan(30);
    expect(json(roJson)).toEqual(found);
  });

  it('a read-only index.db in a writable home: memoir index is exit 3 naming the file', () => {
    expect(u.run(['memoir', 'synth', '--json']).code).toBe(0);
    expect(u.run(['memoir', 'index', '--json']).code).toBe(0);
    const file = join(u.home, 'cache', 'index.db');
    chmodSync(file, 0o444);
    const r = u.run(['memoir', 'index', '--rebuild']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr.split('\n')[0]).toBe(`kourai: cannot write the memoir index ${file}: ${file} is read-only`);
  });
});
