import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CHUNK_COORDS } from '../../src/aggregation/strategy.js';
import { randomBytes } from 'node:crypto';
import { digestOf } from '../../src/council/ingest.js';
import { CouncilClient } from '../../src/federation/council-client.js';
import { GaussianSampler } from '../../src/privacy/gaussian-noise.js';
import { buildRelease, releaseJson, releaseToSafetensors } from '../../src/privacy/release.js';
import { councilKeyOf, roundKey } from '../../src/protocol/round-key.js';
import type { CouncilStorage, NewSubmission } from '../../src/council/storage.js';
import {
  COUNCIL_URL_HEADER,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  RoundStatusSchema,
  SAFETENSORS_BODY_TYPE,
  submissionFromRelease,
  type Submission,
} from '../../src/protocol/wire.js';
import { layoutOf } from '../../src/tensor/layout.js';
import {
  BACKENDS,
  body,
  call,
  FINGERPRINT,
  rowCount,
  startTestCouncil,
  update,
  useBackend,
  type TestCouncil,
} from './helpers.js';

/**
 * Uploads are read as they arrive: storage receives an update's chunks while its body is still
 * coming (so the council never held the body whole), a body cut off or refused half-way leaves no
 * row, and what is stored is exactly what was sent — on both backends, over real sockets.
 */
const BIG = [
  { name: 'big.a', shape: [256, 384] },
  { name: 'big.b', shape: [384, 256] },
];
const BIG_LAYOUT = layoutOf(BIG);
const CHUNKS = BIG.reduce((n, s) => n + Math.ceil((s.shape[0]! * s.shape[1]!) / CHUNK_COORDS), 0);

interface Seen {
  chunks: { index: number; bytes: number }[];
  settled: boolean;
  error: unknown;
}

/** Records what storage receives of each upload, as it receives it. */
function watchUploads(storage: CouncilStorage): Seen[] {
  const seen: Seen[] = [];
  const insert = storage.insertSubmission.bind(storage);
  storage.insertSubmission = (sub: NewSubmission) => {
    const rec: Seen = { chunks: [], settled: false, error: null };
    seen.push(rec);
    const chunks = (async function* () {
      for await (const c of sub.chunks) {
        rec.chunks.push({ index: c.index, bytes: c.data.length });
        yield c;
      }
    })();
    return insert({ ...sub, chunks }).then(
      (r) => {
        rec.settled = true;
        return r;
      },
      (err: unknown) => {
        rec.settled = true;
        rec.error = err;
        throw err;
      },
    );
  };
  return seen;
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An upload over a raw socket: the headers and `first` bytes now, the rest when asked. */
function openUpload(
  url: string,
  token: string,
  agent: string,
  text: Buffer,
  first: number,
): Promise<{ socket: Socket; rest(): void; response: Promise<string> }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => {
      socket.write(
        `PUT /v1/rounds/1/updates/${agent} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\n${PROTOCOL_HEADER}: ${PROTOCOL_VERSION}\r\nauthorization: Bearer ${token}\r\ncontent-length: ${text.length}\r\nconnection: close\r\n\r\n`,
      );
      socket.write(text.subarray(0, first));
      let got = '';
      const response = new Promise<string>((res) => {
        socket.on('data', (d: Buffer) => (got += d.toString()));
        socket.on('close', () => res(got));
      });
      resolve({ socket, rest: () => socket.write(text.subarray(first)), response });
    });
    socket.on('error', reject);
  });
}

const bigBody = (seed: number): Submission => body(update(seed, { specs: BIG, spread: 0.001 }));

/** The float32 bytes of an update in layout order. */
function layoutBytes(seed: number): Buffer {
  const t = update(seed, { specs: BIG, spread: 0.001 });
  return Buffer.concat(t.map((x) => Buffer.from(x.data.buffer, x.data.byteOffset, x.data.byteLength)));
}

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);
    let c: TestCouncil | undefined;
    afterEach(async () => {
      await c?.close();
      c = undefined;
    });

    it('storage receives the chunks of an update while its body is still arriving, 256 KiB at most each', async () => {
      c = await startTestCouncil({ layouts: { '*': BIG } });
      const seen = watchUploads(c.server.storage);
      const text = Buffer.from(JSON.stringify(bigBody(1)));
      // Enough of the body for the first chunk (256 KiB of float32 is ~350 KB of base64), not the rest.
      const first = 400_000;
      expect(text.length).toBeGreaterThan(2 * first);
      const up = await openUpload(c.url, await c.token('athens'), 'metis', text, first);
      await until('storage has the first chunk', () => (seen[0]?.chunks.length ?? 0) >= 1);
      // The council cannot have had the body whole: more than half of it has not been sent yet.
      expect(seen[0]!.settled).toBe(false);
      up.rest();
      const answer = await up.response;
      expect(answer.split('\r\n')[0]).toContain('201');
      expect(seen[0]!.chunks.map((x) => x.index).sort((a, b) => a - b)).toEqual([...Array(CHUNKS).keys()]);
      for (const x of seen[0]!.chunks) expect(x.bytes).toBeLessThanOrEqual(CHUNK_COORDS * 4);
    });

    it('an upload cut off mid-body leaves no row, and the round still aggregates', async () => {
      c = await startTestCouncil({ layouts: { '*': BIG }, min_forges: 3 });
      const seen = watchUploads(c.server.storage);
      const tokens = await Promise.all(['athens', 'corinth', 'delphi'].map((n) => c!.token(n)));
      const text = Buffer.from(JSON.stringify(bigBody(1)));
      const up = await openUpload(c.url, tokens[0]!, 'metis', text, 400_000);
      await until('storage has the first chunk', () => (seen[0]?.chunks.length ?? 0) >= 1);
      up.socket.destroy();
      await until('the cut-off upload is over', () => seen[0]!.settled);
      expect(seen[0]!.error).toBeTruthy();
      expect(await rowCount(c.server.storage, 'submission_chunks')).toBe(0);
      expect(await rowCount(c.server.storage, 'submissions')).toBe(0);
      for (const [i, t] of tokens.entries()) {
        const r = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, bigBody(i + 1));
        expect(r.status, JSON.stringify(r.json)).toBe(201);
      }
      expect(await rowCount(c.server.storage, 'submission_chunks')).toBe(3 * CHUNKS);
      for (const t of tokens) expect((await call(c.url, 'POST', '/v1/rounds/1/seal', t, {})).status).toBe(200);
      let status = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', tokens[0]!)).json);
      for (let i = 0; i < 600 && status.state !== 'aggregated'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', tokens[0]!)).json);
      }
      expect(status.state).toBe('aggregated');
      expect(status.outcomes.find((o) => o.agent === 'metis')).toMatchObject({ aggregated: true, updates: 3 });
    });

    it('a body refused half-way (a tensor carries too many bytes) leaves no row', async () => {
      c = await startTestCouncil({ layouts: { '*': BIG } });
      const sub = bigBody(1);
      const long = sub.tensors[1]!;
      // Twice its data: still canonical base64 of whole float32 values, but twice the length.
      const data = Buffer.from(long.data, 'base64');
      long.data = Buffer.concat([data, data]).toString('base64');
      const r = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', await c.token('athens'), sub);
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe('tensor_data_length');
      expect(await rowCount(c.server.storage, 'submission_chunks')).toBe(0);
      expect(await rowCount(c.server.storage, 'submissions')).toBe(0);
    });

    it('stores exactly the bytes sent, and digests them as digestOf does, in any key and tensor order', async () => {
      c = await startTestCouncil({ layouts: { '*': BIG } });
      // In order: the metadata first, the tensors in name order, each tensor's data last.
      const inOrder = bigBody(1);
      // Out of order: tensors in reverse name order, each one's data before its name and shape,
      // and the metadata after the tensors.
      const b = bigBody(2);
      const t = [...b.tensors].reverse();
      const outOfOrder = `{"tensors":[${t
        .map(
          (x) =>
            `{"data":${JSON.stringify(x.data)},"dtype":"F32","shape":${JSON.stringify(x.shape)},"name":${JSON.stringify(x.name)}}`,
        )
        .join(',')}],"privacy":{"noise_multiplier":0,"clip_norm":1},"base_fingerprint":${JSON.stringify(FINGERPRINT)}}`;
      const [athens, corinth] = [await c.token('athens'), await c.token('corinth')];
      const r1 = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', athens, inOrder);
      const r2 = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', corinth, outOfOrder);
      expect(r1.status, JSON.stringify(r1.json)).toBe(201);
      expect(r2.status, JSON.stringify(r2.json)).toBe(201);
      expect(r1.json.digest).toBe(digestOf(inOrder));
      expect(r2.json.digest).toBe(digestOf(b));
      const rows = await c.server.storage.submissionsFor(1, 'metis');
      const reader = await c.server.storage.chunkReader(rows, BIG_LAYOUT, 'metis', 1);
      try {
        const [v1, v2] = reader.read(0, BIG_LAYOUT.size) as Float32Array[];
        const bytes = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
        expect(bytes(v1!).equals(layoutBytes(1))).toBe(true);
        expect(bytes(v2!).equals(layoutBytes(2))).toBe(true);
      } finally {
        reader.close();
      }
      // A retry (read whole, compared by digest) gets the same receipt; other bytes get 409.
      const again = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', corinth, outOfOrder);
      expect(again.status).toBe(200);
      expect(again.json).toEqual(r2.json);
      expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', corinth, inOrder)).json.error.code).toBe(
        'duplicate_submission',
      );
    });
    it('a safetensors release streams too: its tensors out of name order, stored as sent, the same submission as its JSON', async () => {
      c = await startTestCouncil({ layouts: { '*': BIG } });
      const token = await c.token('athens');
      const me = await new CouncilClient({ url: c.url, token }).me();
      const key = councilKeyOf({ url: c.url, forge: me.forge, registeredAt: me.created_at });
      const release = buildRelease({
        round: roundKey(key, 1),
        agent: 'metis',
        baseFingerprint: FINGERPRINT,
        // Reverse name order: the digest cannot be taken on the way, it is taken from the stored chunks.
        delta: update(3, { specs: BIG, spread: 0.001 }).reverse(),
        clipNorm: 1,
        noiseMultiplier: 0.001,
        sampler: new GaussianSampler(randomBytes),
      }).release;
      const put = async (bytes: string | Buffer, type: string) => {
        const res = await fetch(`${c!.url}/v1/rounds/1/updates/metis`, {
          method: 'PUT',
          headers: {
            [PROTOCOL_HEADER]: String(PROTOCOL_VERSION),
            authorization: `Bearer ${token}`,
            'content-type': type,
            [COUNCIL_URL_HEADER]: c!.url,
          },
          body: bytes,
        });
        return { status: res.status, json: JSON.parse(await res.text()) };
      };
      expect(release.tensors.map((t) => t.name)).toEqual(['big.b', 'big.a']);
      const a = await put(releaseToSafetensors(release), SAFETENSORS_BODY_TYPE);
      expect(a.status, JSON.stringify(a.json)).toBe(201);
      expect(a.json.digest).toBe(digestOf(submissionFromRelease(release, 'metis')));
      const rows = await c.server.storage.submissionsFor(1, 'metis');
      const reader = await c.server.storage.chunkReader(rows, BIG_LAYOUT, 'metis', 1);
      try {
        const [v] = reader.read(0, BIG_LAYOUT.size) as Float32Array[];
        const sent = Buffer.concat(
          BIG.map((s) => Buffer.from(release.tensors.find((t) => t.name === s.name)!.data, 'base64')),
        );
        expect(Buffer.from(v!.buffer, v!.byteOffset, v!.byteLength).equals(sent)).toBe(true);
      } finally {
        reader.close();
      }
      const b = await put(releaseJson(release), 'application/json');
      expect(b.status).toBe(200);
      expect(b.json).toEqual(a.json);
    });
  });
}
