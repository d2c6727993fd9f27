import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, IntegrityError } from '../../src/errors.js';
import { ConsentStore } from '../../src/store/consent-store.js';
import { GENESIS_HASH, PrivacyLedger, type ReleaseParams } from '../../src/store/privacy-ledger.js';
import { openStateDb, statePath } from '../../src/store/state-db.js';
import { STATE_MIGRATIONS } from '../../src/store/state-migrations.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kourai-ledger-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const params = (agent: string, round: string): ReleaseParams => ({
  agent,
  round,
  noiseMultiplier: 2,
  clipNorm: 1,
  sampleRate: 1,
  delta: 1e-5,
});
const at = new Date('2026-10-01T00:00:00Z');

describe('the privacy ledger (kourai.db)', () => {
  it('creates $KOURAI_HOME/kourai.db with WAL and fully synchronous commits', () => {
    const db = openStateDb(home);
    expect(db.name).toBe(statePath(home));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    // Every migration applied (later issues add theirs to the same database).
    expect(db.pragma('user_version', { simple: true })).toBe(Math.max(...STATE_MIGRATIONS.map((m) => m.version)));
    db.close();
  });

  it('appends chained rows and reads them back across connections', () => {
    const db = openStateDb(home);
    const l = new PrivacyLedger(db);
    const a = l.append(params('aidos', '1'), () => ({ epsilonAgent: 1, epsilonForge: 1 }), at);
    const b = l.append(
      params('metis', '1'),
      (existing) => ({ epsilonAgent: 1, epsilonForge: existing.length + 1 }),
      at,
    );
    expect(a).toMatchObject({ id: 1, prevHash: GENESIS_HASH });
    expect(b).toMatchObject({ id: 2, prevHash: a.hash, epsilonForge: 2 });
    db.close();
    const again = new PrivacyLedger(openStateDb(home));
    expect(again.releases()).toEqual([a, b]);
    again.db.close();
  });

  it('a refusing check writes nothing', () => {
    const l = new PrivacyLedger(openStateDb(home));
    expect(() =>
      l.append(
        params('aidos', '1'),
        () => {
          throw new Error('over budget');
        },
        at,
      ),
    ).toThrow('over budget');
    expect(l.releases()).toEqual([]);
    l.db.close();
  });

  it('is append-only: updates and deletes are refused by the database', () => {
    const l = new PrivacyLedger(openStateDb(home));
    const r = l.append(params('aidos', '1'), () => ({ epsilonAgent: 1, epsilonForge: 1 }), at);
    l.attachPayload({ releaseId: r.id, clippedNorm: 1, releasedNorm: 2, payload: '{}', createdAt: at.toISOString() });
    l.recordEvent(r.id, 'failed', 'timeout', at);
    new ConsentStore(l.db).record([{ agent: 'aidos', allowed: true }], 'flags', at);
    for (const sql of [
      'UPDATE releases SET noise_multiplier = 100',
      'DELETE FROM releases',
      'DELETE FROM release_payloads',
      "UPDATE release_events SET event = 'submitted'",
      'DELETE FROM consent_decisions',
      'UPDATE consent SET allowed = 0',
    ]) {
      expect(() => l.db.exec(sql), sql).toThrow(/append-only/);
    }
    expect(l.releases()).toHaveLength(1);
    expect(l.events()).toMatchObject([{ releaseId: 1, event: 'failed', detail: 'timeout' }]);
    l.db.close();
  });

  it('one release per agent and round (UNIQUE)', () => {
    const l = new PrivacyLedger(openStateDb(home));
    l.append(params('aidos', '1'), () => ({ epsilonAgent: 1, epsilonForge: 1 }), at);
    expect(() => l.append(params('aidos', '1'), () => ({ epsilonAgent: 1, epsilonForge: 1 }), at)).toThrow(/UNIQUE/);
    l.db.close();
  });

  it('detects an edited row (a refund attempt) with an integrity error, exit 8', () => {
    const l = new PrivacyLedger(openStateDb(home));
    for (let i = 1; i <= 3; i++) l.append(params('aidos', String(i)), () => ({ epsilonAgent: i, epsilonForge: i }), at);
    l.db.exec('DROP TRIGGER releases_no_update; UPDATE releases SET noise_multiplier = 1000 WHERE id = 2');
    try {
      l.releases();
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(IntegrityError);
      expect((err as IntegrityError).exitCode).toBe(ExitCode.integrity);
      expect((err as Error).message).toMatch(/release 2 was changed/);
    }
    l.db.close();
  });

  it('detects a deleted row in the middle', () => {
    const l = new PrivacyLedger(openStateDb(home));
    for (let i = 1; i <= 3; i++) l.append(params('aidos', String(i)), () => ({ epsilonAgent: i, epsilonForge: i }), at);
    l.db.exec('DROP TRIGGER releases_no_delete; DELETE FROM releases WHERE id = 2');
    expect(() => l.releases()).toThrow(/release 2 is missing/);
    l.db.close();
  });

  it('a file that is not a database is an integrity error that says not to delete it', () => {
    writeFileSync(statePath(home), 'this is not sqlite'.repeat(100));
    try {
      openStateDb(home);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(IntegrityError);
      expect((err as IntegrityError).hint).toMatch(/do not delete it/);
    }
  });
});

describe('consent decisions', () => {
  it('starts with no consent, keeps every decision with its time, and the latest wins per agent', () => {
    const db = openStateDb(home);
    const c = new ConsentStore(db);
    expect(c.current().every((a) => !a.allowed && a.decidedAt === null)).toBe(true);
    c.record(
      [
        { agent: 'aidos', allowed: true },
        { agent: 'metis', allowed: true },
      ],
      'scene',
      new Date('2026-10-01T10:00:00Z'),
    );
    c.record([{ agent: 'metis', allowed: false }], 'flags', new Date('2026-10-02T10:00:00Z'));
    const now = Object.fromEntries(c.current().map((a) => [a.agent, a]));
    expect(now.aidos).toMatchObject({ allowed: true, decidedAt: '2026-10-01T10:00:00.000Z' });
    expect(now.metis).toMatchObject({ allowed: false, decidedAt: '2026-10-02T10:00:00.000Z' });
    expect(now.kallos).toMatchObject({ allowed: false, decidedAt: null });
    expect(c.history()).toMatchObject([
      {
        id: 1,
        via: 'scene',
        agents: [
          { agent: 'aidos', allowed: true },
          { agent: 'metis', allowed: true },
        ],
      },
      { id: 2, via: 'flags', agents: [{ agent: 'metis', allowed: false }] },
    ]);
    db.close();
  });
});
