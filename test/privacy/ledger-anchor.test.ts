import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, type KouraiError } from '../../src/errors.js';
import { checkAnchors, ledgerHead } from '../../src/privacy/ledger-anchor.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { GENESIS_HASH, type ReleaseRow } from '../../src/store/privacy-ledger.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

let home: string;
beforeEach(() => {
  home = tempDir('kourai-anchor-');
});
afterEach(() => removeDir(home));

function releases(n: number): ReleaseRow[] {
  const g = PrivacyGate.open({
    home,
    config: { ...DEFAULT_PRIVACY_CONFIG, agentEpsilon: 1e6, forgeEpsilon: 1e6 },
    random: randomBytes,
  });
  g.consent.record([{ agent: 'metis', allowed: true }], 'flags', new Date());
  for (let i = 1; i <= n; i++)
    g.recordRelease({
      round: `c0123456789abcde#${i}`,
      agent: 'metis',
      delta: [{ name: 'w', shape: [2], data: Float32Array.of(0.1, 0.2) }],
      baseFingerprint: 'sha256:b',
    });
  const rows = g.ledger.releases();
  g.close();
  return rows;
}

const exit = (f: () => void): number => {
  try {
    f();
    return 0;
  } catch (e) {
    return (e as KouraiError).exitCode;
  }
};

describe('ledger anchors', () => {
  it('the head of an empty ledger is the genesis hash', () => {
    expect(ledgerHead([])).toEqual({ releases: 0, hash: GENESIS_HASH });
  });

  it('the memoir anchor: the ledger must still hold the recorded head', () => {
    const rows = releases(3);
    const head = ledgerHead(rows);
    expect(() => checkAnchors(rows, { memoir: { head, where: 'the council_event of round 3' } })).not.toThrow();
    // later releases are fine
    expect(() => checkAnchors(rows, { memoir: { head: ledgerHead(rows.slice(0, 2)), where: 'x' } })).not.toThrow();
    // the newest row deleted: noticed
    expect(() => checkAnchors(rows.slice(0, 2), { memoir: { head, where: 'the council_event of round 3' } })).toThrow(
      /rolled back: the council_event of round 3 records 3 releases, the ledger holds 2/,
    );
    expect(exit(() => checkAnchors(rows.slice(0, 2), { memoir: { head, where: 'm' } }))).toBe(ExitCode.integrity);
    // the same number of rows, but not the same history
    expect(() =>
      checkAnchors([...rows.slice(0, 2), { ...(rows[2] as ReleaseRow), hash: 'f'.repeat(64) }], {
        memoir: { head, where: 'm' },
      }),
    ).toThrow(/replaced/);
  });

  it('the council anchor: every acknowledged update needs its release', () => {
    const rows = releases(2);
    expect(() =>
      checkAnchors(rows, { council: [{ round: 'c0123456789abcde#2', agent: 'metis', where: 'the council' }] }),
    ).not.toThrow();
    expect(() =>
      checkAnchors(rows, { council: [{ round: 'c0123456789abcde#2', agent: null, where: 'the council' }] }),
    ).not.toThrow();
    expect(() =>
      checkAnchors(rows, { council: [{ round: 'c0123456789abcde#2', agent: 'aidos', where: 'the council' }] }),
    ).toThrow(/the council holds aidos's update for round c0123456789abcde#2, but the ledger has no release for it/);
    expect(
      exit(() =>
        checkAnchors(rows.slice(0, 1), {
          council: [{ round: 'c0123456789abcde#2', agent: null, where: 'the council' }],
        }),
      ),
    ).toBe(ExitCode.integrity);
  });
});
