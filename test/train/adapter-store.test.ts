import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import { openStateDb } from '../../src/store/state-db.js';
import { adapterLayout } from '../../src/train/adapter-layout.js';
import { AdapterStore } from '../../src/train/adapter-store.js';
import { embeddingsBaseSpec, inputDim } from '../../src/train/base-spec.js';
import { initLora, type LoraWeights } from '../../src/train/lora.js';
import { readSafetensors, writeSafetensors } from '../../src/tensor/safetensors.js';
import { createHash } from 'node:crypto';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { smallSpec } from './helpers.js';

const spec = smallSpec(64, 8);
const base = { spec, fingerprint: 'sha256:aaaa' };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function fresh(): { home: string; store: AdapterStore; close: () => void } {
  const home = tempDir('kourai-adapters-');
  dirs.push(home);
  const db = openStateDb(home);
  return { home, store: new AdapterStore(home, db, base), close: () => db.close() };
}

function lora(seed: number): LoraWeights {
  const r = mulberry32(seed);
  const w = initLora({ inDim: inputDim(smallSpec()), hidden: 8, out: 1, rank: 2 }, r);
  for (let i = 0; i < w.directAt.length; i++) w.directAt[i] = r() - 0.5;
  for (let i = 0; i < w.directB.length; i++) w.directB[i] = r() - 0.5;
  for (let i = 0; i < w.headB.length; i++) w.headB[i] = r() - 0.5;
  for (let i = 0; i < w.denseB.length; i++) w.denseB[i] = r() - 0.5;
  return w;
}

const save = (store: AdapterStore, seed: number) =>
  store.save({
    agent: 'techne',
    kind: 'bond',
    lora: lora(seed),
    alpha: 4,
    origin: 'trained',
    metrics: { seed },
    dataWindow: { examples: 3 },
    createdAt: '2026-11-22T10:00:00.000Z',
  });

function thrown(fn: () => unknown): { exitCode: number; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { exitCode: number; message: string };
  }
  throw new Error('expected an error');
}

describe('adapter storage', () => {
  it('writes PEFT layout (names, shapes, config) and reads back the float32 values; versions count up; the newest is current', () => {
    const { home, store, close } = fresh();
    const v1 = save(store, 1);
    const v2 = save(store, 2);
    expect([v1.version, v2.version, v2.parentVersion]).toEqual([1, 2, 1]);
    expect(v2.path).toBe(join('adapters', 'techne', 'bond', 'v2'));
    const config = JSON.parse(readFileSync(join(home, v2.path, 'adapter_config.json'), 'utf8'));
    // Only PEFT LoraConfig fields: PEFT reads it without a warning.
    expect(Object.keys(config).sort()).toEqual([
      'base_model_name_or_path',
      'bias',
      'fan_in_fan_out',
      'inference_mode',
      'init_lora_weights',
      'lora_alpha',
      'lora_dropout',
      'peft_type',
      'r',
      'target_modules',
      'task_type',
    ]);
    expect(config).toMatchObject({
      peft_type: 'LORA',
      r: 2,
      lora_alpha: 4,
      target_modules: ['encoder.dense', 'head.score', 'direct.score'],
    });
    const st = readSafetensors(readFileSync(join(home, v2.path, 'adapter_model.safetensors')));
    // kourai's record travels with the weights.
    expect(st.metadata).toMatchObject({
      format: 'pt',
      'kourai.format': '2',
      'kourai.agent': 'techne',
      'kourai.kind': 'bond',
      'kourai.base_fingerprint': 'sha256:aaaa',
    });
    expect(JSON.parse(st.metadata['kourai.base_spec']!)).toEqual(spec);
    expect(st.tensors.map((t) => ({ name: t.name, shape: t.shape }))).toEqual(adapterLayout(spec, 'techne', 2));
    expect(st.digest).toBe('verified');
    const loaded = store.loadCurrent('techne', 'bond')!;
    expect(loaded.row.version).toBe(2);
    expect(Array.from(loaded.lora.all)).toEqual(Array.from(Float32Array.from(lora(2).all)));
    close();
  });

  it('a config re-saved by PEFT (its own fields added, nothing of kourai) still loads', () => {
    const { home, store, close } = fresh();
    const v1 = save(store, 1);
    const file = join(home, v1.path, 'adapter_config.json');
    const peft = {
      ...JSON.parse(readFileSync(file, 'utf8')),
      alpha_pattern: {},
      auto_mapping: null,
      corda_config: null,
      eva_config: null,
      exclude_modules: null,
      layer_replication: null,
      layers_pattern: null,
      layers_to_transform: null,
      loftq_config: {},
      lora_bias: false,
      megatron_config: null,
      megatron_core: 'megatron.core',
      modules_to_save: null,
      rank_pattern: {},
      revision: null,
      trainable_token_indices: null,
      use_dora: false,
      use_rslora: false,
    };
    writeFileSync(file, JSON.stringify(peft, null, 2));
    const loaded = store.loadCurrent('techne', 'bond')!;
    expect(loaded.config.kourai).toMatchObject({
      agent: 'techne',
      kind: 'bond',
      version: 1,
      base_fingerprint: 'sha256:aaaa',
    });
    expect(Array.from(loaded.lora.all)).toEqual(Array.from(Float32Array.from(lora(1).all)));
    close();
  });

  it('an adapter written the old way (kourai in adapter_config.json, not in the safetensors metadata) still loads', () => {
    const { home, store, close } = fresh();
    const v1 = save(store, 1);
    const dir = join(home, v1.path);
    const config = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
    writeFileSync(
      join(dir, 'adapter_config.json'),
      JSON.stringify({
        ...config,
        kourai: {
          format: 1,
          agent: 'techne',
          kind: 'bond',
          version: 1,
          base_fingerprint: 'sha256:aaaa',
          base_spec: spec,
          created_at: '2026-11-22T10:00:00.000Z',
        },
      }),
    );
    const st = readSafetensors(readFileSync(join(dir, 'adapter_model.safetensors')));
    const old = writeSafetensors(st.tensors, {
      format: 'pt',
      'kourai.agent': 'techne',
      'kourai.kind': 'bond',
      'kourai.base_fingerprint': 'sha256:aaaa',
    });
    writeFileSync(join(dir, 'adapter_model.safetensors'), old);
    const db = openStateDb(home);
    db.prepare('UPDATE adapters SET file_sha256 = ? WHERE agent = ? AND kind = ? AND version = 1').run(
      createHash('sha256').update(old).digest('hex'),
      'techne',
      'bond',
    );
    db.close();
    const loaded = store.loadCurrent('techne', 'bond')!;
    expect(loaded.config.kourai).toMatchObject({
      format: 1,
      agent: 'techne',
      version: 1,
      created_at: '2026-11-22T10:00:00.000Z',
    });
    expect(Array.from(loaded.lora.all)).toEqual(Array.from(Float32Array.from(lora(1).all)));
    // Neither place records it: refused as corrupt (exit 8), naming what is missing.
    writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify(config));
    const err = thrown(() => store.loadCurrent('techne', 'bond'));
    expect(err.exitCode).toBe(ExitCode.integrity);
    expect(err.message).toMatch(
      /neither adapter_model\.safetensors's metadata nor adapter_config\.json says which agent and base/,
    );
    close();
  });

  it('a version directory left on disk without a registry row (a crash before the commit) is never reused', () => {
    const { home, store, close } = fresh();
    save(store, 1);
    mkdirSync(join(home, 'adapters', 'techne', 'bond', 'v2'));
    expect(save(store, 2).version).toBe(3);
    close();
  });

  const damage: [string, (file: string, dir: string) => void, RegExp][] = [
    ['truncated', (f) => truncateSync(f, 200), /truncated/],
    [
      'a flipped bit in the data',
      (f) => {
        const b = readFileSync(f);
        b[b.length - 3] = b[b.length - 3]! ^ 0x10;
        writeFileSync(f, b);
      },
      /data section does not match the sha256/,
    ],
    ['a missing config', (_f, d) => rmSync(join(d, 'adapter_config.json')), /adapter_config.json is missing/],
    [
      'weights recorded for another agent',
      (f) => {
        const st = readSafetensors(readFileSync(f));
        writeFileSync(f, writeSafetensors(st.tensors, { ...st.metadata, 'kourai.agent': 'metis' }));
      },
      /is for metis bond/,
    ],
  ];
  it('refuses a whole, valid file that is not the one registered (another version copied over it)', () => {
    const { home, store, close } = fresh();
    const v1 = save(store, 1);
    const v2 = save(store, 2);
    store.registry.setCurrent('techne', 'bond', 1, '2026-11-22T11:00:00.000Z');
    writeFileSync(
      join(home, v1.path, 'adapter_model.safetensors'),
      readFileSync(join(home, v2.path, 'adapter_model.safetensors')),
    );
    const err = thrown(() => store.loadCurrent('techne', 'bond'));
    expect(err.exitCode).toBe(ExitCode.integrity);
    expect(err.message).toMatch(/is not the file that was written/);
    close();
  });

  for (const [what, hurt, message] of damage) {
    it(`refuses ${what}: exit 8, naming the adapter and the path`, () => {
      const { home, store, close } = fresh();
      const row = save(store, 1);
      const dir = join(home, row.path);
      hurt(join(dir, 'adapter_model.safetensors'), dir);
      const err = thrown(() => store.loadCurrent('techne', 'bond'));
      expect(err.exitCode).toBe(ExitCode.integrity);
      expect(err.message).toMatch(message);
      expect(err.message).toContain('techne bond adapter v1');
      expect(err.message).toContain(dir);
      close();
    });
  }

  it('refuses an adapter over another base (exit 3), even when the file is whole', () => {
    const { home, store, close } = fresh();
    save(store, 1);
    const other = new AdapterStore(home, openStateDb(home), {
      spec: embeddingsBaseSpec('nomic-embed-text', 64),
      fingerprint: 'sha256:bbbb',
    });
    const err = thrown(() => other.loadCurrent('techne', 'bond'));
    expect(err.exitCode).toBe(ExitCode.environment);
    expect(err.message).toMatch(
      /trained over base aaaa, but the configured base is bbbb \(hashed n-grams \(16384\) \+ 20 structure features \+ embeddings nomic-embed-text \(64\) \+ words \(8192\)\)/,
    );
    close();
  });

  it('refuses an adapter from the previous base format in one line naming its file and `kourai train bond` (exit 3); the file stays as it was', () => {
    const { home, close } = fresh();
    const oldSpec = { ...spec, format: 'kourai-base/1' } as unknown as typeof spec;
    const db = openStateDb(home);
    const old = new AdapterStore(home, db, { spec: oldSpec, fingerprint: 'sha256:0123456789ab' });
    const v1 = save(old, 1);
    db.close();
    const file = join(home, v1.path, 'adapter_model.safetensors');
    const before = readFileSync(file);
    const now = new AdapterStore(home, openStateDb(home), base);
    const err = thrown(() => now.loadCurrent('techne', 'bond'));
    expect(err.exitCode).toBe(ExitCode.environment);
    expect(err.message).not.toContain('\n');
    expect(err.message).toContain(join(home, v1.path, 'adapter_model.safetensors'));
    expect(err.message).toMatch(
      /earlier base format kourai-base\/1 .*retrain it with `kourai train bond --agent techne`/,
    );
    expect(readFileSync(file).equals(before)).toBe(true);
    close();
  });
});

const canMount =
  process.platform === 'linux' &&
  process.getuid?.() === 0 &&
  spawnSync('sh', [
    '-c',
    'mkdir -p /tmp/.kourai-mnt-probe && mount -t tmpfs -o size=64k tmpfs /tmp/.kourai-mnt-probe && umount /tmp/.kourai-mnt-probe',
  ]).status === 0;

describe('a full disk mid-write (a small tmpfs under adapters/)', () => {
  it('fails with exit 3 naming the adapter; the previous version stays current and whole; no temporary directory is left', (ctx) => {
    ctx.skip(
      !canMount,
      'needs root on Linux to mount a 16 KiB tmpfs (CI runs as root): the full-disk path of the adapter store was not checked',
    );
    const { home, store, close } = fresh();
    const mnt = join(home, 'adapters');
    mkdirSync(mnt);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', mnt]).status).toBe(0);
    try {
      const v1 = store.save({
        agent: 'techne',
        kind: 'bond',
        lora: lora(1),
        alpha: 4,
        origin: 'trained',
        metrics: {},
        dataWindow: {},
        createdAt: '2026-11-22T10:00:00.000Z',
      });
      // nearly full: the next few versions run out of space part-way
      writeFileSync(join(mnt, 'filler'), Buffer.alloc(1024));
      let err: { exitCode: number; message: string } | null = null;
      for (let i = 0; i < 8 && !err; i++) {
        try {
          store.save({
            agent: 'techne',
            kind: 'bond',
            lora: lora(2 + i),
            alpha: 4,
            origin: 'trained',
            metrics: {},
            dataWindow: {},
            createdAt: '2026-11-22T10:00:00.000Z',
          });
        } catch (e) {
          err = e as { exitCode: number; message: string };
        }
      }
      expect(err).not.toBeNull();
      expect(err!.exitCode).toBe(ExitCode.environment);
      expect(err!.message).toMatch(/no space left on device while writing techne bond adapter v\d+/);
      const current = store.loadCurrent('techne', 'bond')!;
      expect(current.row.version).toBeGreaterThanOrEqual(v1.version);
      expect(readdirSync(join(mnt, 'techne', 'bond')).filter((n) => n.startsWith('.'))).toEqual([]);
      expect(existsSync(join(home, current.row.path))).toBe(true);
    } finally {
      spawnSync('umount', [mnt]);
      close();
    }
  });
});
