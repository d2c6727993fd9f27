import { createHash, type Hash } from 'node:crypto';
import { chunkRanges } from '../aggregation/strategy.js';
import { RELEASE_METADATA_KEY, releaseFromParts, releaseFromSafetensors } from '../privacy/release.js';
import { submissionFromBody, submissionFromRelease, type Submission } from '../protocol/wire.js';
import { Base64Decoder, Base64Encoder } from '../tensor/base64-stream.js';
import { SafetensorsError } from '../tensor/errors.js';
import type { Layout, LayoutEntry } from '../tensor/layout.js';
import { DATA_DIGEST_KEY, parseSafetensorsHeader, type SafetensorsEntry } from '../tensor/safetensors.js';
import { JsonBodyError, JsonBodyParser } from './body-json.js';
import { digestHeadLine, digestMetaLine, inNameOrder } from './ingest.js';
import { CouncilHttpError } from './http-error.js';
import type { StoredChunk } from './storage.js';

/**
 * An update read as it arrives. A body (JSON or safetensors) is parsed piece by piece; each
 * tensor's bytes are decoded, checked (finite, length) and summed into the norm on the way, and
 * cut into the storage chunks (chunkRanges: 256 KiB, never across tensors) that are handed to
 * storage as soon as each is full. What is held between pieces: the chunk being filled, the
 * document's small values (names, shapes, the privacy fields) and at most one token.
 *
 * The digest (ingest.ts digestOf: the metadata, then each tensor in name order) is computed on
 * the way when the body gives the metadata before the tensors and the tensors in name order;
 * otherwise it is computed at the end from the stored chunks (a canonical base64 text is the
 * encoding of its bytes, so the bytes give the text back). A tensor whose data comes before its
 * name or shape in its JSON object cannot be placed while it arrives: its text is held until its
 * object closes (kourai's clients never send that order).
 */

/** A refusal found in a tensor's bytes (reported after the checks of the document, as ingest does). */
interface DataProblem {
  error: CouncilHttpError;
}

interface TensorHead {
  name: string;
  shape: number[];
  dtype: unknown;
}

interface TensorSink {
  write(bytes: Buffer): void;
  end(): void;
}

/** The digest's metadata line (as digestOf hashes it), or null when not known yet. */
type DigestMeta = string | null;

function digestMetaOf(sub: Pick<Submission, 'base_fingerprint' | 'privacy' | 'weight'>): string {
  return digestMetaLine(sub.base_fingerprint, sub.privacy.clip_norm, sub.privacy.noise_multiplier, sub.weight ?? null);
}

/** Cuts tensors into storage chunks and checks their values, whatever the order they arrive in. */
export class UpdateAssembler {
  /** Full chunks not yet taken by storage. */
  readonly ready: StoredChunk[] = [];
  private readonly firstChunk = new Map<string, number>();
  private readonly specs: Map<string, LayoutEntry>;
  private readonly ranges: [number, number][];
  private readonly placed = new Set<string>();
  private readonly sums = new Map<string, number>();
  private readonly problems = new Map<string, DataProblem>();
  // The digest on the way, while the arrival order allows it.
  private hash: Hash | null = createHash('sha256');
  private hashedMeta: DigestMeta = null;
  private readonly hashedHeads: string[] = [];
  private lastName: string | null = null;

  constructor(readonly layout: Layout) {
    this.ranges = chunkRanges(layout);
    this.specs = new Map(layout.tensors.map((t) => [t.name, t]));
    // chunkRanges cuts the tensors in layout order: each one's chunks follow the previous one's.
    let i = 0;
    for (const t of layout.tensors) {
      this.firstChunk.set(t.name, i);
      while (i < this.ranges.length && (this.ranges[i] as [number, number])[0] < t.offset + t.size) i++;
    }
  }

  /** The digest cannot be computed on the way (the order of the body does not allow it). */
  dropRunningDigest(): void {
    this.hash = null;
  }

  /** A tensor's data begins. `head` null: its name or shape is not known (its bytes are only counted). */
  tensor(head: TensorHead | null, encoding: 'base64' | 'raw', meta: DigestMeta): TensorSink {
    this.hashHead(head, meta);
    const spec = head ? this.specs.get(head.name) : undefined;
    const placeable =
      head !== null &&
      spec !== undefined &&
      !this.placed.has(spec.name) &&
      head.shape.length === spec.shape.length &&
      head.shape.every((d, i) => d === spec.shape[i]);
    if (placeable) this.placed.add(spec.name);
    const place = placeable ? this.placer(spec) : null;
    const hash = this.hash;
    const encoder = encoding === 'raw' && hash ? new Base64Encoder() : null;
    const decoder = encoding === 'base64' ? new Base64Decoder((bytes) => place?.write(bytes)) : null;
    return {
      write: (bytes) => {
        if (this.hash === hash && hash) hash.update(encoder ? encoder.write(bytes) : bytes);
        if (decoder) decoder.write(bytes);
        else place?.write(bytes);
      },
      end: () => {
        if (this.hash === hash && hash && encoder) hash.update(encoder.end());
        const b64 = decoder?.end() ?? null;
        if (spec && place) place.end(b64);
      },
    };
  }

  private hashHead(head: TensorHead | null, meta: DigestMeta): void {
    if (!this.hash) return;
    if (meta === null || head === null || typeof head.dtype !== 'string') return this.dropRunningDigest();
    if (this.hashedMeta === null) {
      this.hashedMeta = meta;
      this.hash.update(meta);
    } else if (this.hashedMeta !== meta) return this.dropRunningDigest();
    if (this.lastName !== null && !(this.lastName < head.name)) return this.dropRunningDigest();
    const line = digestHeadLine(head);
    this.lastName = head.name;
    this.hashedHeads.push(line);
    this.hash.update(`\n${line}\n`);
  }

  /** Writes a tensor's decoded bytes into its chunks; checks values; records what is wrong. */
  private placer(spec: LayoutEntry): { write(bytes: Buffer): void; end(b64: Error | null): void } {
    const expected = spec.size * 4;
    let got = 0;
    let c = this.firstChunk.get(spec.name) as number;
    let [start, stop] = this.ranges[c] as [number, number];
    let buf = Buffer.allocUnsafe((stop - start) * 4);
    let fill = 0;
    let checked = 0;
    let sum = 0;
    let nonFinite: { index: number; value: number } | null = null;
    return {
      write: (bytes) => {
        let off = 0;
        while (off < bytes.length && got < expected) {
          const n = Math.min(bytes.length - off, buf.length - fill, expected - got);
          bytes.copy(buf, fill, off, off + n);
          fill += n;
          off += n;
          got += n;
          for (; (checked + 1) * 4 <= fill; checked++) {
            const x = buf.readFloatLE(checked * 4);
            if (x - x !== 0 && !nonFinite) nonFinite = { index: start - spec.offset + checked, value: x };
            sum += x * x;
          }
          if (fill === buf.length) {
            this.ready.push({ index: c, data: buf });
            c++;
            const next = this.ranges[c];
            if (next && got < expected) {
              [start, stop] = next;
              buf = Buffer.allocUnsafe((stop - start) * 4);
              fill = 0;
              checked = 0;
            }
          }
        }
        got += bytes.length - off;
      },
      end: (b64) => {
        this.sums.set(spec.name, sum);
        const problem = b64
          ? new CouncilHttpError('invalid_base64', `tensor "${spec.name}": data: ${b64.message}`, { tensor: spec.name })
          : got !== expected
            ? new CouncilHttpError(
                'tensor_data_length',
                `tensor "${spec.name}" carries ${got} bytes; shape [${spec.shape.join(', ')}] of float32 needs ${expected}`,
                { tensor: spec.name, bytes: got, expected },
              )
            : nonFinite
              ? new CouncilHttpError(
                  'non_finite',
                  `tensor "${spec.name}" holds ${Number.isNaN(nonFinite.value) ? 'NaN' : nonFinite.value > 0 ? 'Infinity' : '-Infinity'} at flat index ${nonFinite.index}`,
                  { tensor: spec.name, index: nonFinite.index },
                )
              : null;
        if (problem) this.problems.set(spec.name, { error: problem });
      },
    };
  }

  /** The first problem in a tensor's bytes, in layout order (after the document's own checks). */
  throwDataProblem(): void {
    for (const t of this.layout.tensors) {
      const p = this.problems.get(t.name);
      if (p) throw p.error;
      if (!this.sums.has(t.name))
        throw new CouncilHttpError('tensor_data_length', `tensor "${t.name}" carries no data`, { tensor: t.name });
    }
  }

  /** The L2 norm: per-tensor sums of squares in float64, added in layout order. */
  norm(): number {
    let s = 0;
    for (const t of this.layout.tensors) s += this.sums.get(t.name) ?? 0;
    return Math.sqrt(s);
  }

  /** The digest computed on the way, if the body's order allowed it (else null). */
  runningDigest(sub: Submission): string | null {
    if (!this.hash) return null;
    const heads = inNameOrder(sub.tensors).map(digestHeadLine);
    if (this.hashedMeta !== digestMetaOf(sub) || heads.join('\n') !== this.hashedHeads.join('\n')) return null;
    const h = this.hash;
    this.hash = null;
    return h.digest('hex');
  }

  /** The digest from the stored chunks (the body's order did not allow it on the way). */
  async digestFromStored(sub: Submission, stored: (index: number) => Promise<Buffer>): Promise<string> {
    const h = createHash('sha256');
    h.update(digestMetaOf(sub));
    for (const t of inNameOrder(sub.tensors)) {
      h.update(`\n${digestHeadLine(t)}\n`);
      const spec = this.specs.get(t.name) as LayoutEntry;
      const enc = new Base64Encoder();
      for (let c = this.firstChunk.get(t.name) as number; c < this.ranges.length; c++) {
        const [s] = this.ranges[c] as [number, number];
        if (s >= spec.offset + spec.size) break;
        h.update(enc.write(await stored(c)));
      }
      h.update(enc.end());
    }
    return h.digest('hex');
  }
}

/** How an update reaches the council, and how it becomes a Submission once read. */
export interface UpdateReader {
  /** Drives the assembler over the body; yields each full chunk as soon as it is. */
  chunks: AsyncIterable<StoredChunk>;
  /** After `chunks` has ended: the Submission (tensors' data ""), refused precisely if it is not one. */
  submission(agent: string): Submission;
  /** The digest when the reader has it without the bytes (an in-process submission). */
  digest?: string;
}

/** The body stopped before its end (the connection closed): the upload is dropped. */
export class UploadCutOffError extends Error {
  constructor(cause: unknown) {
    super(`the upload was cut off: ${(cause as Error).message ?? String(cause)}`);
    this.name = 'UploadCutOffError';
  }
}

async function* drive(
  body: AsyncIterable<Buffer>,
  asm: UpdateAssembler,
  write: (piece: Buffer) => void,
  end: () => void,
): AsyncIterable<StoredChunk> {
  const it = body[Symbol.asyncIterator]();
  for (;;) {
    let r: IteratorResult<Buffer>;
    try {
      r = await it.next();
    } catch (err) {
      // The client went away or was cut off (upload deadline): nothing of it is kept.
      throw new UploadCutOffError(err);
    }
    if (r.done) break;
    write(r.value);
    while (asm.ready.length) yield asm.ready.shift() as StoredChunk;
  }
  end();
  while (asm.ready.length) yield asm.ready.shift() as StoredChunk;
}

function invalidJson(err: unknown): never {
  if (err instanceof JsonBodyError)
    throw new CouncilHttpError('invalid_body', `the body is not valid JSON: ${err.message}`);
  throw err;
}

/** A JSON body: a Submission, or a release document. */
export function jsonReader(body: AsyncIterable<Buffer>, asm: UpdateAssembler): UpdateReader {
  const held = new Map<number, Buffer[]>();
  let holding: Buffer[] | null = null;
  let sink: TensorSink | null = null;
  const heads = new Map<number, string>();
  let root: Record<string, unknown> = {};
  let doc: unknown;
  const metaOf = (r: Record<string, unknown>): DigestMeta => {
    if ('format' in r) {
      const m = r.mechanism as { clip_norm?: unknown; noise_multiplier?: unknown } | undefined;
      return digestMetaLine(r.base_fingerprint, m?.clip_norm, m?.noise_multiplier, null);
    }
    const p = r.privacy as { clip_norm?: unknown; noise_multiplier?: unknown } | undefined;
    return digestMetaLine(r.base_fingerprint, p?.clip_norm, p?.noise_multiplier, r.weight ?? null);
  };
  const headOf = (t: Record<string, unknown>): TensorHead | null =>
    typeof t.name === 'string' && Array.isArray(t.shape) && t.shape.every((d) => typeof d === 'number')
      ? { name: t.name, shape: t.shape as number[], dtype: t.dtype }
      : null;
  const parser = new JsonBodyParser({
    dataStart(index, tensor, r) {
      root = r;
      if (heads.has(index) || held.has(index))
        throw new CouncilHttpError('invalid_body', `tensors[${index}] gives "data" twice`);
      const head = headOf(tensor);
      if (!head) {
        // Its name or shape comes after its data: held until the object closes.
        holding = [];
        held.set(index, holding);
        asm.dropRunningDigest();
        return;
      }
      heads.set(index, digestHeadLine(head));
      sink = asm.tensor(head, 'base64', metaOf(r));
    },
    data(chars) {
      if (sink) sink.write(chars);
      else holding?.push(Buffer.from(chars));
    },
    dataEnd() {
      sink?.end();
      sink = null;
      holding = null;
    },
    tensorEnd(index, tensor) {
      const parts = held.get(index);
      if (parts) {
        held.delete(index);
        heads.set(index, 'held');
        const s = asm.tensor(headOf(tensor), 'base64', metaOf(root));
        for (const p of parts) s.write(p);
        s.end();
        return;
      }
      const used = heads.get(index);
      const head = headOf(tensor);
      if (used !== undefined && (!head || used !== digestHeadLine(head)))
        throw new CouncilHttpError(
          'invalid_body',
          `tensors[${index}]: its name, shape and dtype must not change after its data`,
        );
    },
  });
  return {
    chunks: drive(
      body,
      asm,
      (piece) => {
        try {
          parser.write(piece);
        } catch (err) {
          invalidJson(err);
        }
      },
      () => {
        try {
          doc = parser.end();
        } catch (err) {
          invalidJson(err);
        }
      },
    ),
    submission: (agent) => submissionFromBody(doc, agent),
  };
}

/**
 * A safetensors release body of `length` bytes: the 8-byte header length and the header are held
 * (names, shapes, offsets, the envelope), then the data section streams tensor by tensor.
 */
export function safetensorsReader(body: AsyncIterable<Buffer>, length: number, asm: UpdateAssembler): UpdateReader {
  let head: Buffer[] = [];
  let headBytes = 0;
  let headerLen = -1;
  let entries: SafetensorsEntry[] = [];
  let metadata: Record<string, string> = {};
  let at = 0; // offset in the data section
  let next = 0;
  let sink: TensorSink | null = null;
  let meta: DigestMeta = null;
  const dataHash = createHash('sha256');
  const header = (bytes: Buffer): Buffer => {
    const need = (headerLen < 0 ? 8 : 8 + headerLen) - headBytes;
    const take = bytes.subarray(0, need);
    head.push(Buffer.from(take));
    headBytes += take.length;
    if (headerLen < 0 && headBytes === 8) {
      const big = Buffer.concat(head).readBigUInt64LE(0);
      if (big > BigInt(length - 8))
        throw new SafetensorsError(
          `truncated or not safetensors: header length ${big} does not fit in a ${length}-byte file`,
        );
      headerLen = Number(big);
      head = [];
      headBytes = 8;
      return header(bytes.subarray(take.length));
    }
    if (headerLen >= 0 && headBytes === 8 + headerLen) {
      ({ entries, metadata } = parseSafetensorsHeader(Buffer.concat(head).toString('utf8'), length - 8 - headerLen));
      head = [];
      for (const e of entries)
        if (e.dtype !== 'F32') throw new SafetensorsError(`tensor "${e.name}": a release holds F32 tensors only`);
      try {
        const env = JSON.parse(metadata[RELEASE_METADATA_KEY] ?? 'null') as {
          base_fingerprint?: unknown;
          mechanism?: { clip_norm?: unknown; noise_multiplier?: unknown };
        } | null;
        meta = env
          ? digestMetaLine(env.base_fingerprint, env.mechanism?.clip_norm, env.mechanism?.noise_multiplier, null)
          : null;
      } catch {
        meta = null;
      }
    }
    return bytes.subarray(take.length);
  };
  const data = (bytes: Buffer): void => {
    dataHash.update(bytes);
    let off = 0;
    while (off < bytes.length) {
      const e = entries[next];
      if (!e) throw new SafetensorsError('corrupt: bytes after the last tensor');
      if (!sink) sink = asm.tensor({ name: e.name, shape: e.shape, dtype: 'F32' }, 'raw', meta);
      const n = Math.min(bytes.length - off, e.end - at);
      sink.write(bytes.subarray(off, off + n));
      off += n;
      at += n;
      if (at === e.end) {
        sink.end();
        sink = null;
        next++;
      }
    }
  };
  return {
    chunks: drive(
      body,
      asm,
      (piece) => {
        let rest = piece;
        if (headerLen < 0 || headBytes < 8 + headerLen) rest = header(rest);
        if (rest.length) data(rest);
      },
      () => {
        if (headerLen < 0 || headBytes < 8 + headerLen || next < entries.length)
          throw new SafetensorsError(`truncated: the body ended before its ${length} bytes`);
        const recorded = metadata[DATA_DIGEST_KEY];
        if (recorded !== undefined) {
          const actual = dataHash.digest('hex');
          if (actual !== recorded)
            throw new SafetensorsError(
              `corrupt: the data section does not match the sha256 the file records (${recorded.slice(0, 12)}…, found ${actual.slice(0, 12)}…)`,
            );
          delete metadata[DATA_DIGEST_KEY];
        }
      },
    ),
    submission: (agent) =>
      submissionFromRelease(
        releaseFromParts(
          metadata,
          entries.map((e) => ({ name: e.name, shape: e.shape, dtype: 'F32' as const, data: '' })),
        ),
        agent,
      ),
  };
}

/** An update already in memory (an in-process council: the simulator, tests). */
export function memoryReader(sub: Submission, digest: string, asm: UpdateAssembler): UpdateReader {
  return {
    chunks: (async function* () {
      for (const t of sub.tensors) {
        const s = asm.tensor({ name: t.name, shape: t.shape, dtype: t.dtype }, 'base64', null);
        s.write(Buffer.from(t.data, 'latin1'));
        s.end();
        while (asm.ready.length) yield asm.ready.shift() as StoredChunk;
      }
    })(),
    submission: () => ({ ...sub, tensors: sub.tensors.map((t) => ({ ...t, data: '' })) }),
    digest,
  };
}

/** An update body as it comes over HTTP: its declared length and its bytes as they arrive. */
export interface Upload {
  type: 'json' | 'safetensors';
  /** Content-Length (the council refuses uploads that do not declare it). */
  length: number;
  body: AsyncIterable<Buffer>;
}

/**
 * The body read whole (at most `length`, which the council bounded by payload_limit): only for a
 * retry of an update already accepted for its slot, compared with it by digest and then dropped.
 */
export async function wholeSubmission(upload: Upload, agent: string): Promise<Submission> {
  const parts: Buffer[] = [];
  try {
    for await (const p of upload.body) parts.push(p);
  } catch (err) {
    throw new UploadCutOffError(err);
  }
  const bytes = Buffer.concat(parts);
  if (upload.type === 'safetensors') return submissionFromRelease(releaseFromSafetensors(bytes), agent);
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new CouncilHttpError('invalid_body', 'the body is not valid JSON');
  }
  return submissionFromBody(doc, agent);
}
