import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Council } from '../../src/council/council.js';
import { addForge } from '../../src/council/forges.js';
import { CouncilHttpError } from '../../src/council/http-error.js';
import { SqliteCouncilStorage } from '../../src/council/sqlite-storage.js';
import type { ForgeRow } from '../../src/council/storage.js';
import { councilAnchors } from '../../src/federation/round/ledger-anchors.js';
import { GaussianSampler } from '../../src/privacy/gaussian-noise.js';
import { checkAnchors } from '../../src/privacy/ledger-anchor.js';
import { buildRelease, releaseJson } from '../../src/privacy/release.js';
import { councilKeyOf, roundKey } from '../../src/protocol/round-key.js';
import { submissionFromRelease, type RoundStatus } from '../../src/protocol/wire.js';
import { VirtualClock } from '../../src/runtime/clock.js';
import type { ReleaseRow } from '../../src/store/privacy-ledger.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { body, call, FINGERPRINT, startTestCouncil, update, type TestCouncil, testConfig } from './helpers.js';

/**
 * A release is bound to its round and to the forge that drew it. Reproduced over HTTP (a stale
 * release, one forge's bytes from another, an edited round key), then as a property of the
 * council in-process: whatever mix of honest, stale, replayed and edited uploads arrives, the
 * council accepts exactly the releases bound to their round and forge, and a forge's ledger
 * always matches what the council says it holds (no false "rolled back" alarm).
 */
const councils: TestCouncil[] = [];
afterEach(async () => {
  for (const c of councils.splice(0)) await c.close();
});

async function put(
  url: string,
  token: string,
  round: number,
  agent: string,
  text: string,
  councilUrl: string | null = url,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/v1/rounds/${round}/updates/${agent}`, {
    method: 'PUT',
    headers: {
      'kourai-protocol': '2',
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(councilUrl ? { 'kourai-council-url': councilUrl } : {}),
    },
    body: text,
  });
  return { status: res.status, json: JSON.parse(await res.text()) };
}

async function keyOf(c: TestCouncil, token: string): Promise<string> {
  const me = (await call(c.url, 'GET', '/v1/me', token)).json as { forge: string; created_at: string };
  return councilKeyOf({ url: c.url, forge: me.forge, registeredAt: me.created_at });
}

function releaseText(key: string, round: number, seed: number, agent = 'metis'): string {
  return releaseJson(
    buildRelease({
      round: roundKey(key, round),
      agent: agent as 'metis',
      baseFingerprint: FINGERPRINT,
      delta: update(seed),
      clipNorm: 1,
      noiseMultiplier: 0.5,
      sampler: new GaussianSampler(randomBytes),
    }).release,
  );
}

describe('a release is bound to its round and its forge (over HTTP)', () => {
  it('a round-1 release uploaded into round 2 is refused (422 round_mismatch)', async () => {
    const c = await startTestCouncil({ min_forges: 1 });
    councils.push(c);
    const a = await c.token('athens');
    const ka = await keyOf(c, a);
    const r1 = releaseText(ka, 1, 1);
    expect((await put(c.url, a, 1, 'metis', r1)).status).toBe(201);
    await call(c.url, 'POST', '/v1/rounds/1/seal', a, {});
    await c.server.council.idle();
    expect((await call(c.url, 'GET', '/v1/rounds/current', a)).json.round).toBe(2);
    const stale = await put(c.url, a, 2, 'metis', r1);
    expect(stale.status).toBe(422);
    expect(stale.json.error).toMatchObject({
      code: 'round_mismatch',
      message: expect.stringMatching(/for round 1 but was sent to round 2/),
    });
    expect((await call(c.url, 'GET', '/v1/rounds/2', a)).json.you.submitted).toEqual([]);
  });

  it('one forge’s exact release bytes from a second forge are refused, as a document (422) and as a plain submission (409)', async () => {
    const c = await startTestCouncil({ min_forges: 3 });
    councils.push(c);
    const a = await c.token('athens');
    const b = await c.token('sparta');
    const text = releaseText(await keyOf(c, a), 1, 2);
    expect((await put(c.url, a, 1, 'metis', text)).status).toBe(201);
    const asDoc = await put(c.url, b, 1, 'metis', text);
    expect(asDoc.status).toBe(422);
    expect(asDoc.json.error.code).toBe('foreign_round_key');
    const plain = submissionFromRelease(JSON.parse(text), 'metis');
    delete plain.round_key;
    const asPlain = await put(c.url, b, 1, 'metis', JSON.stringify(plain));
    expect(asPlain.status).toBe(409);
    expect(asPlain.json.error.code).toBe('replayed_release');
  });

  it('a forge’s release with its round key edited is refused: 409 for the slot it already holds, 422 on a fresh one; no Kourai-Council-Url: 422', async () => {
    const c = await startTestCouncil({ min_forges: 3 });
    councils.push(c);
    const a = await c.token('athens');
    const ka = await keyOf(c, a);
    const text = releaseText(ka, 1, 3);
    expect((await put(c.url, a, 1, 'metis', text)).status).toBe(201);
    const edited = text.replace(`${ka}#1`, 'c0123456789abcde#1');
    expect((await put(c.url, a, 1, 'metis', edited)).json.error.code).toBe('foreign_round_key');
    const fresh = releaseText(ka, 1, 4, 'techne').replace(`${ka}#1`, 'c0123456789abcde#1');
    expect((await put(c.url, a, 1, 'techne', fresh)).json.error.code).toBe('foreign_round_key');
    expect((await put(c.url, a, 1, 'techne', releaseText(ka, 1, 4, 'techne'), null)).json.error.code).toBe(
      'foreign_round_key',
    );
    expect((await put(c.url, a, 1, 'techne', releaseText(ka, 1, 4, 'techne'))).status).toBe(201);
  });
});

describe('round binding as a property of the council (in-process)', () => {
  const URL = 'https://council.example.org';
  type Action = {
    sender: 0 | 1;
    drawnBy: 0 | 1;
    drawnFor: 1 | 2;
    agent: 'metis' | 'techne';
    seed: number;
    form: 'release' | 'plain';
  };
  const action: fc.Arbitrary<Action> = fc.record({
    sender: fc.constantFrom(0 as const, 1 as const),
    drawnBy: fc.constantFrom(0 as const, 1 as const),
    drawnFor: fc.constantFrom(1 as const, 2 as const),
    agent: fc.constantFrom('metis' as const, 'techne' as const),
    seed: fc.integer({ min: 0, max: 2 }),
    form: fc.constantFrom('release' as const, 'plain' as const),
  });

  it('accepts exactly the releases bound to their round and forge, and the ledger always matches what the council holds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 10 }), async (actions) => {
        const dir = tempDir('kourai-binding-');
        const config = testConfig(dir);
        const storage = new SqliteCouncilStorage(config.data_dir);
        const council = new Council({
          storage,
          config,
          clock: new VirtualClock(Date.UTC(2026, 0, 1)),
          log: () => undefined,
        });
        try {
          await council.start();
          const forges: ForgeRow[] = [];
          for (const name of ['athens', 'sparta'])
            forges.push((await addForge(storage, name, randomBytes, new Date(Date.UTC(2026, 0, 1)))).forge);
          const keys = forges.map((f) => councilKeyOf({ url: URL, forge: f.name, registeredAt: f.createdAt }));
          // The model: slots per (forge, agent) -> [digest-ish content id, round key]; ledgers per forge.
          const slots = new Map<string, { content: string; key: string | undefined }>();
          const ledgers: { round: string; agent: string }[][] = [[], []];
          for (const x of actions) {
            const key = roundKey(keys[x.drawnBy] as string, x.drawnFor);
            const content = `${x.seed}`; // the bytes: the same seed is the same tensors, whoever sends them
            const sub = { ...body(update(100 + x.seed)), ...(x.form === 'release' ? { round_key: key } : {}) };
            // What a forge that drew it holds in its ledger (a plain body is drawn by its sender for round 1).
            const drawer = x.form === 'release' ? x.drawnBy : x.sender;
            ledgers[drawer]?.push({
              round: x.form === 'release' ? key : roundKey(keys[x.sender] as string, 1),
              agent: x.agent,
            });
            let expected: string; // 'created', 'replay' or the refusal's code
            const slot = slots.get(`${x.sender}/${x.agent}`);
            const sentKey = x.form === 'release' ? key : undefined;
            if (x.form === 'release' && x.drawnFor !== 1) expected = 'round_mismatch';
            else if (x.form === 'release' && x.drawnBy !== x.sender) expected = 'foreign_round_key';
            else if (slot)
              expected =
                slot.content === content && (sentKey === undefined || slot.key === undefined || slot.key === sentKey)
                  ? 'replay'
                  : 'duplicate_submission';
            else if (
              [...slots.entries()].some(
                ([k, v]) =>
                  k !== `${x.sender}/${x.agent}` &&
                  k.endsWith(`/${x.agent}`) &&
                  v.content === content &&
                  (sentKey !== undefined || v.key !== undefined),
              )
            )
              expected = 'replayed_release';
            else expected = 'created';
            let got: string;
            try {
              const r = await council.submit(forges[x.sender] as ForgeRow, 1, x.agent, sub, { councilUrl: URL });
              got = r.created ? 'created' : 'replay';
            } catch (err) {
              if (!(err instanceof CouncilHttpError)) throw err;
              got = err.code;
            }
            expect(got, JSON.stringify(x)).toBe(expected);
            if (got === 'created') slots.set(`${x.sender}/${x.agent}`, { content, key: sentKey });
          }
          // Whatever the council holds for a forge, that forge's ledger has it: no false roll-back alarm.
          for (const [i, f] of forges.entries()) {
            const status = (await council.roundStatus(f, 1)) as RoundStatus;
            const rows = (ledgers[i] ?? []).map((r, n) => ({ ...r, hash: `h${n}` })) as unknown as ReleaseRow[];
            expect(() =>
              checkAnchors(rows, { council: councilAnchors(keys[i] as string, [status], null).council }),
            ).not.toThrow();
          }
        } finally {
          await council.stop();
          await storage.close();
          removeDir(dir);
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('a release the council holds in a round other than the one it was drawn for is anchored to its own round (no false roll-back alarm)', () => {
    const key = 'c0123456789abcde';
    const privacy_policy = { accepted: { clip_norm: { min: 0, max: 1 }, noise_multiplier: { min: 0, max: 10 } } };
    const status = {
      round: 2,
      privacy_policy,
      you: { submitted: ['metis'], round_keys: { metis: `${key}#1` } },
    } as unknown as RoundStatus;
    const rows = [{ round: `${key}#1`, agent: 'metis', hash: 'h' }] as unknown as ReleaseRow[];
    expect(() => checkAnchors(rows, { council: councilAnchors(key, [status], null).council })).not.toThrow();
    // Without the council's word on the key, the same holding is (correctly) a missing row for round 2.
    const bare = { round: 2, privacy_policy, you: { submitted: ['metis'] } } as unknown as RoundStatus;
    expect(() => checkAnchors(rows, { council: councilAnchors(key, [bare], null).council })).toThrow(/rolled back/);
  });
});
