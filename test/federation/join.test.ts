import { statSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, type KouraiError } from '../../src/errors.js';
import { joinCouncil } from '../../src/federation/round/join.js';
import {
  checkCouncilUrl,
  forgetMembership,
  membershipPath,
  readMembership,
  redactError,
} from '../../src/federation/round/membership.js';
import { httpTransport } from '../../src/federation/round/transport.js';
import { inProcessTransport } from './in-process-transport.js';
import { addForge } from '../../src/council/forges.js';
import { randomBytes } from 'node:crypto';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { FINGERPRINT, startTestCouncil, type TestCouncil } from '../council/helpers.js';

let council: TestCouncil;
let home: string;
beforeEach(async () => {
  council = await startTestCouncil();
  home = tempDir('kourai-join-');
});
afterEach(async () => {
  await council.close();
  removeDir(home);
});

const now = new Date('2026-11-22T10:00:00Z');
async function failure(p: Promise<unknown>): Promise<KouraiError> {
  try {
    await p;
  } catch (err) {
    return err as KouraiError;
  }
  throw new Error('expected a failure');
}

describe('federate join (service)', () => {
  it('checks protocol, token and base, says what it found, and stores the membership 0600', async () => {
    const token = await council.token('athens');
    const { findings, membership } = await joinCouncil({
      home,
      url: council.url,
      token,
      forgeFingerprint: FINGERPRINT,
      transport: httpTransport(council.url, token),
      eventsMemoir: `${home}/events.jsonl`,
      now,
    });
    expect(findings).toMatchObject({
      url: council.url,
      protocol: 2,
      forge: 'athens',
      trust: 1,
      exiled: false,
      base: { forge: FINGERPRINT, accepted: [FINGERPRINT], match: true },
      current_round: 1,
      replaced: null,
    });
    expect(JSON.stringify(findings)).not.toContain(token);
    expect(membership.council_key).toMatch(/^c[0-9a-f]{15}$/);
    expect(statSync(membershipPath(home)).mode & 0o777).toBe(0o600);
    expect(statSync(`${home}/federation`).mode & 0o777).toBe(0o700);
    expect(readMembership(home)).toEqual(membership);
    expect(JSON.parse(readFileSync(membershipPath(home), 'utf8')).token).toBe(token);
  });

  it('refuses a rejected token (exit 9), a base mismatch (exit 3) and a non-council URL (exit 9), storing nothing', async () => {
    const token = await council.token('athens');
    const bad = `${token.slice(0, -4)}AAAA`;
    const rejected = await failure(
      joinCouncil({
        home,
        url: council.url,
        token: bad,
        forgeFingerprint: FINGERPRINT,
        transport: httpTransport(council.url, bad),
        eventsMemoir: 'e',
        now,
      }),
    );
    expect(rejected.exitCode).toBe(ExitCode.network);
    expect(rejected.message).toMatch(/refused the token/);
    expect(rejected.message).not.toContain(bad);
    const mismatch = await failure(
      joinCouncil({
        home,
        url: council.url,
        token,
        forgeFingerprint: 'sha256:other',
        transport: httpTransport(council.url, token),
        eventsMemoir: 'e',
        now,
      }),
    );
    expect(mismatch.exitCode).toBe(ExitCode.environment);
    expect(mismatch.message).toMatch(
      new RegExp(`accepts base model ${FINGERPRINT}; this forge runs sha256:other: not joined`),
    );
    const notCouncil = await failure(
      joinCouncil({
        home,
        url: `${council.url}/v1`,
        token,
        forgeFingerprint: FINGERPRINT,
        transport: httpTransport(`${council.url}/v1`, token, { retries: 0 }),
        eventsMemoir: 'e',
        now,
      }),
    );
    expect(notCouncil.exitCode).toBe(ExitCode.network);
    expect(notCouncil.message).toMatch(/does not answer like a kourai council/);
    expect(readMembership(home)).toBeNull();
  });

  it('an unreachable council is exit 9 and the token never appears in the error', async () => {
    const token = 'kourai_1_' + 'x'.repeat(43);
    const transport = httpTransport('http://127.0.0.1:9', token, {
      retries: 0,
      fetch: async () => {
        throw new Error(`connect refused while sending Bearer ${token}`);
      },
    });
    const err = await failure(
      joinCouncil({
        home,
        url: 'http://127.0.0.1:9',
        token,
        forgeFingerprint: FINGERPRINT,
        transport,
        eventsMemoir: 'e',
        now,
      }),
    );
    expect(err.exitCode).toBe(ExitCode.network);
    expect(err.message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    expect(`${err.message} ${err.hint ?? ''} ${err.stack ?? ''}`).not.toContain(token);
    expect(err.message).toContain('[redacted]');
  });

  it('works the same over the in-process council', async () => {
    const { forge, token } = await addForge(council.server.storage, 'sparta', randomBytes, now);
    const { findings } = await joinCouncil({
      home,
      url: 'in-process',
      token,
      forgeFingerprint: FINGERPRINT,
      transport: inProcessTransport(council.server.council, forge),
      eventsMemoir: 'e',
      now,
    });
    expect(findings).toMatchObject({ forge: 'sparta', base: { match: true } });
  });

  it('leave forgets the membership (and says whether there was one)', async () => {
    const token = await council.token('athens');
    await joinCouncil({
      home,
      url: council.url,
      token,
      forgeFingerprint: FINGERPRINT,
      transport: httpTransport(council.url, token),
      eventsMemoir: 'e',
      now,
    });
    expect(forgetMembership(home)).toBe(true);
    expect(readMembership(home)).toBeNull();
    expect(forgetMembership(home)).toBe(false);
  });
});

describe('council URLs and secrets', () => {
  it('accepts http(s) URLs and refuses credentials, queries and other schemes (exit 2)', () => {
    expect(checkCouncilUrl('https://council.example.org/')).toBe('https://council.example.org');
    expect(checkCouncilUrl('http://127.0.0.1:7470')).toBe('http://127.0.0.1:7470');
    for (const [url, msg] of [
      ['ftp://x', /speaks HTTP/],
      ['https://u:secret@x.org', /credentials in the URL/],
      ['https://x.org/?a=1', /no query/],
      ['not a url', /not a URL/],
    ] as const) {
      let err: KouraiError | undefined;
      try {
        checkCouncilUrl(url);
      } catch (e) {
        err = e as KouraiError;
      }
      expect(err?.exitCode).toBe(ExitCode.usage);
      expect(err?.message).toMatch(msg);
      expect(err?.message).not.toContain('secret');
    }
  });

  it('redactError removes the secret from message, hint and stack and drops the cause, keeping the class', () => {
    const e = new Error('token abc123secret leaked', { cause: new Error('abc123secret') });
    const r = redactError(e, 'abc123secret');
    expect(r).toBe(e);
    expect(r.message).toBe('token [redacted] leaked');
    expect(r.stack).not.toContain('abc123secret');
    expect('cause' in r).toBe(false);
  });
});
