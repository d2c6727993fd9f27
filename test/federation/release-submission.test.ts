import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CouncilClient } from '../../src/federation/council-client.js';
import { GaussianSampler } from '../../src/privacy/gaussian-noise.js';
import { buildRelease, releaseJson, releaseToSafetensors, type CouncilRelease } from '../../src/privacy/release.js';
import { councilKeyOf, roundKey } from '../../src/protocol/round-key.js';
import { call, FINGERPRINT, SPECS, startTestCouncil, update, type TestCouncil } from '../council/helpers.js';

/** One release for the test council's layout, as the forge "athens" would build it (its own round key). */
function release(round: number, agent: 'metis' | 'aidos' = 'metis', seed = 1): CouncilRelease {
  return buildRelease({
    round: roundKey(councilKey, round),
    agent,
    baseFingerprint: FINGERPRINT,
    delta: update(seed, { specs: SPECS }),
    clipNorm: 1,
    noiseMultiplier: 0.5,
    sampler: new GaussianSampler(randomBytes),
  }).release;
}

async function put(
  url: string,
  token: string,
  route: string,
  body: string | Buffer,
  type: string,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${route}`, {
    method: 'PUT',
    headers: {
      'kourai-protocol': '2',
      authorization: `Bearer ${token}`,
      'content-type': type,
      'kourai-council-url': url,
    },
    body,
  });
  return { status: res.status, json: JSON.parse(await res.text()) };
}

let council: TestCouncil;
let token: string;
let councilKey: string;
beforeEach(async () => {
  council = await startTestCouncil({ min_forges: 2 });
  token = await council.token('athens');
  const me = await new CouncilClient({ url: council.url, token }).me();
  councilKey = councilKeyOf({ url: council.url, forge: me.forge, registeredAt: me.created_at });
});
afterEach(async () => council.close());

describe('one release format: the document the forge writes is what the council accepts', () => {
  it('accepts the release document as JSON, byte for byte as `privacy release` writes it', async () => {
    const r = release(1);
    const res = await put(council.url, token, '/v1/rounds/1/updates/metis', releaseJson(r), 'application/json');
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ round: 1, forge: 'athens', agent: 'metis', coords: 28 });
  });

  it('accepts the same release as a safetensors body, and counts it as the same submission', async () => {
    const r = release(1);
    const a = await put(
      council.url,
      token,
      '/v1/rounds/1/updates/metis',
      releaseToSafetensors(r),
      'application/octet-stream',
    );
    expect(a.status).toBe(201);
    const b = await put(council.url, token, '/v1/rounds/1/updates/metis', releaseJson(r), 'application/json');
    expect(b.status).toBe(200); // a replay: same digest whatever the encoding
    expect(b.json).toEqual(a.json);
    const other = await put(
      council.url,
      token,
      '/v1/rounds/1/updates/metis',
      releaseToSafetensors(release(1, 'metis', 2)),
      'application/octet-stream',
    );
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('duplicate_submission');
  });

  it('the client sends either form and gets the receipt', async () => {
    const client = new CouncilClient({ url: council.url, token });
    const j = await client.submitRelease(1, release(1, 'metis'));
    const s = await client.submitRelease(1, release(1, 'aidos'), { encoding: 'safetensors' });
    expect([j.agent, s.agent]).toEqual(['metis', 'aidos']);
    expect((await client.currentRound()).you.submitted.sort()).toEqual(['aidos', 'metis']);
  });

  it('refuses a release sent to another agent’s route, an old format, and a damaged safetensors body (400, nothing stored)', async () => {
    const r = release(1, 'aidos');
    const wrong = await put(council.url, token, '/v1/rounds/1/updates/metis', releaseJson(r), 'application/json');
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toMatchObject({ code: 'invalid_body' });
    expect(wrong.json.error.message).toMatch(/aidos's but was sent to metis's route/);
    const old = await put(
      council.url,
      token,
      '/v1/rounds/1/updates/aidos',
      releaseJson(r).replace('council-release/3', 'council-release/2'),
      'application/json',
    );
    expect(old.status).toBe(400);
    expect(old.json.error.message).toMatch(/unsupported release format/);
    const bytes = releaseToSafetensors(r);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    const damaged = await put(council.url, token, '/v1/rounds/1/updates/aidos', bytes, 'application/octet-stream');
    expect(damaged.status).toBe(400);
    expect(damaged.json.error.message).toMatch(/safetensors body: corrupt: the data section does not match/);
    const status = await call(council.url, 'GET', '/v1/rounds/1', token);
    expect(status.json.you.submitted).toEqual([]);
  });

  it('still accepts the plain submission body', async () => {
    const client = new CouncilClient({ url: council.url, token });
    const rec = await client.submit(1, 'metis', {
      tensors: update(3),
      baseFingerprint: FINGERPRINT,
      clipNorm: 1,
      noiseMultiplier: 0,
    });
    expect(rec.agent).toBe('metis');
  });
});
