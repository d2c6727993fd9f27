import fc from 'fast-check';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { SafetensorsError } from '../../src/tensor/errors.js';
import { toLE } from '../../src/tensor/float-codec.js';
import { DATA_DIGEST_KEY, readSafetensors, writeSafetensors } from '../../src/tensor/safetensors.js';
import { readSafetensorsFile, writeSafetensorsFile } from '../../src/tensor/safetensors-file.js';
import { dtypeOf, type NamedTensor, type TensorData } from '../../src/tensor/tensor.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

const tensorArb = fc.record({
  name: fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s !== '__metadata__'),
  shape: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }),
  f64: fc.boolean(),
});

/** A file made by hand, as another writer (the Python library) lays it out: header, then data. */
function handMade(header: unknown, data: Buffer): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([head, json, data]);
}

const sample = (): NamedTensor<TensorData>[] => [
  { name: 'base_model.model.encoder.dense.lora_A.weight', shape: [2, 3], data: Float32Array.of(1, 2, 3, 4, 5, 6) },
  {
    name: 'base_model.model.encoder.dense.lora_B.weight',
    shape: [3, 2],
    data: Float64Array.of(-1, -2, -3, -4, -5, -6),
  },
];

describe('safetensors', () => {
  it('round-trips names, shapes, dtypes, values (incl. NaN, ±0, ±Inf) and metadata', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(tensorArb, { selector: (t) => t.name, maxLength: 5 }),
        fc.dictionary(
          fc.string().filter((k) => k !== DATA_DIGEST_KEY),
          fc.string(),
        ),
        (specs, metadata) => {
          const tensors: NamedTensor<TensorData>[] = specs.map((s, i) => {
            const n = s.shape.reduce((a, b) => a * b, 1);
            const vals = Array.from(
              { length: n },
              (_, k) => [NaN, -0, Infinity, -Infinity, 1.5, i + k / 7][k % 6] as number,
            );
            return { name: s.name, shape: s.shape, data: s.f64 ? Float64Array.from(vals) : Float32Array.from(vals) };
          });
          const bytes = writeSafetensors(tensors, metadata);
          expect(Number(bytes.readBigUInt64LE(0)) % 8).toBe(0);
          const back = readSafetensors(bytes);
          expect(back.metadata).toEqual(metadata);
          expect(back.digest).toBe('verified');
          expect(back.tensors.map((t) => [t.name, t.shape, dtypeOf(t.data)])).toEqual(
            tensors.map((t) => [t.name, t.shape, dtypeOf(t.data)]),
          );
          back.tensors.forEach((t, i) => expect(Array.from(t.data)).toEqual(Array.from(tensors[i]!.data)));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('reads the layout the Python library writes (header JSON, data_offsets relative to the data, no digest)', () => {
    const bytes = handMade(
      {
        __metadata__: { format: 'pt' },
        b: { dtype: 'F64', shape: [1], data_offsets: [8, 16] },
        a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
      },
      Buffer.concat([toLE(Float32Array.of(1, 2)), toLE(Float64Array.of(3))]),
    );
    const { tensors, metadata, digest } = readSafetensors(bytes);
    expect(metadata).toEqual({ format: 'pt' });
    expect(digest).toBe('absent');
    expect(tensors.map((t) => [t.name, Array.from(t.data)])).toEqual([
      ['a', [1, 2]],
      ['b', [3]],
    ]);
  });

  it('refuses malformed files with a precise message and exit code 5', () => {
    const d8 = Buffer.alloc(8);
    const cases: [Buffer, RegExp][] = [
      [Buffer.alloc(4), /truncated: 4 bytes is too short/],
      [
        Buffer.concat([Buffer.from([255, 255, 255, 255, 0, 0, 0, 0]), Buffer.alloc(10)]),
        /header length 4294967295 does not fit in a 18-byte file/,
      ],
      [Buffer.concat([Buffer.from([2, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('[]')]), /does not start with "\{"/],
      [
        handMade({ a: { dtype: 'I8', shape: [1], data_offsets: [0, 1] } }, Buffer.alloc(1)),
        /dtype "I8" is not supported/,
      ],
      [
        handMade({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, d8),
        /spans 8 bytes, but shape \[3\] of F32 needs 12/,
      ],
      [
        handMade({ a: { dtype: 'F32', shape: [4], data_offsets: [0, 16] } }, d8),
        /truncated: tensor "a" ends at byte 16 of the data section, which holds only 8 bytes/,
      ],
      [
        handMade(
          {
            a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
            b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] },
          },
          d8,
        ),
        /overlaps/,
      ],
      [
        handMade({ a: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, d8),
        /bytes 0–4 of the data section belong to no tensor/,
      ],
      [handMade({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, d8), /4 bytes after the last tensor/],
      [handMade({ a: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }, d8), /invalid shape \[-1\]/],
      [
        handMade({ a: { dtype: 'F32', shape: [65536, 65536, 65536, 65536], data_offsets: [0, 4] } }, d8),
        /invalid shape/,
      ],
      [handMade({ a: { dtype: 'F32', shape: [1], data_offsets: [0, '4'] } }, Buffer.alloc(4)), /invalid data_offsets/],
      [
        handMade({ __metadata__: { n: 1 }, a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, Buffer.alloc(4)),
        /__metadata__ must map strings to strings/,
      ],
    ];
    for (const [bytes, msg] of cases) {
      const err = (() => {
        try {
          readSafetensors(bytes);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err, String(msg)).toBeInstanceOf(SafetensorsError);
      expect((err as SafetensorsError).message).toMatch(msg);
      expect((err as SafetensorsError).exitCode).toBe(ExitCode.invalidData);
    }
    expect(() => writeSafetensors([{ name: 'x', shape: [2], data: new Float32Array(3) }])).toThrow(
      /holds 2 values, data has 3/,
    );
  });

  it('every truncation of a file is refused, never read as a smaller whole', () => {
    const whole = writeSafetensors(sample(), { kind: 'bond' });
    for (let len = 0; len < whole.length; len++)
      expect(() => readSafetensors(whole.subarray(0, len)), `truncated to ${len} bytes`).toThrow(SafetensorsError);
    // The same holds without kourai's digest: the tiling rule alone catches a short data section.
    const plain = writeSafetensors(sample(), {}, { digest: false });
    for (let len = 0; len < plain.length; len++)
      expect(() => readSafetensors(plain.subarray(0, len))).toThrow(SafetensorsError);
  });

  it('a changed byte anywhere in a kourai-written file is refused (the data digest covers the values)', () => {
    const whole = writeSafetensors(sample());
    const headerEnd = 8 + Number(whole.readBigUInt64LE(0));
    fc.assert(
      fc.property(
        fc.integer({ min: headerEnd, max: whole.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        (at, xor) => {
          const bad = Buffer.from(whole);
          bad[at] = (bad[at] as number) ^ xor;
          expect(() => readSafetensors(bad)).toThrow(/does not match the sha256 the file records/);
        },
      ),
    );
  });

  it('extra bytes after the last tensor are refused (no polyglot files)', () => {
    expect(() => readSafetensors(Buffer.concat([writeSafetensors(sample()), Buffer.from('#!/bin/sh\n')]))).toThrow(
      /10 bytes after the last tensor/,
    );
  });
});

describe('safetensors files', () => {
  const dir = tempDir('kourai-st-');
  afterAll(() => removeDir(dir));

  it('writes atomically, refuses to replace a file unless asked, and leaves no temporary file behind', () => {
    const path = join(dir, 'adapter_model.safetensors');
    writeSafetensorsFile(path, sample(), { metadata: { version: '1' } });
    expect(readSafetensorsFile(path).metadata).toEqual({ version: '1' });
    const err = (() => {
      try {
        writeSafetensorsFile(path, sample().slice(0, 1), {
          overwrite: false,
          what: 'adapter',
          existsHint: 'pass --force',
        });
      } catch (e) {
        return e as { exitCode: number; message: string; hint: string };
      }
      return null;
    })();
    expect(err).toMatchObject({
      exitCode: ExitCode.conflict,
      message: `adapter already exists: ${path}`,
      hint: 'pass --force',
    });
    expect(readSafetensorsFile(path).tensors).toHaveLength(2);
    writeSafetensorsFile(path, sample().slice(0, 1), { metadata: { version: '2' } });
    expect(readSafetensorsFile(path)).toMatchObject({ metadata: { version: '2' }, digest: 'verified' });
    expect(readSafetensorsFile(path).tensors).toHaveLength(1);
    expect(readdirSync(dir)).toEqual(['adapter_model.safetensors']);
  });

  it('names the file in errors: a corrupt file is exit 5, a missing one exit 6, a missing directory leaves nothing', () => {
    const path = join(dir, 'cut.safetensors');
    writeFileSync(path, writeSafetensors(sample()).subarray(0, 60));
    expect(() => readSafetensorsFile(path, 'council adapter')).toThrow(
      new RegExp(`^council adapter ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: truncated`),
    );
    expect(() => readSafetensorsFile(join(dir, 'none.safetensors'))).toThrow(
      expect.objectContaining({ exitCode: ExitCode.notFound }),
    );
    const nowhere = join(dir, 'no-such-dir', 'x.safetensors');
    expect(() => writeSafetensorsFile(nowhere, sample())).toThrow(
      expect.objectContaining({ exitCode: ExitCode.notFound }),
    );
    mkdirSync(join(dir, 'no-such-dir'));
    expect(readdirSync(join(dir, 'no-such-dir'))).toEqual([]);
    expect(existsSync(nowhere)).toBe(false);
    expect(readFileSync(path).length).toBe(60);
  });
});
