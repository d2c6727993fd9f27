import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRootSet } from '../../src/council/root-memoir.js';
import { ROOT_MIN_PAIRS } from '../../src/council/root-set.js';
import { rootSessions } from '../../src/memoir/sample/root.js';
import { publicInitFlat } from '../../src/council/public-init.js';
import { writeRootMemoir } from '../../src/simulation/forges.js';
import { layoutOf } from '../../src/tensor/layout.js';
import { adapterLayout, loraToTensors, tensorsToLora } from '../../src/train/adapter-layout.js';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import type { Example } from '../../src/train/examples/types.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { DEFAULT_SETTINGS, train } from '../../src/train/trainer.js';
import { UsageError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'kourai-root-set-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the council's root set", () => {
  it('the root memoir holds the shared craft only: no random-sided disagreement, and pairs for the craft agents', () => {
    for (const s of rootSessions(4, 12)) expect(s.lines.join('\n')).not.toMatch(/disagreement_resolution/);
    const root = loadRootSet({
      root_memoir: writeRootMemoir(join(dir, 'a'), 12),
      data_dir: join(dir, 'a'),
      base_fingerprints: [BUILTIN_FINGERPRINT],
    });
    expect(root?.size('techne')).toBeGreaterThanOrEqual(ROOT_MIN_PAIRS);
    // Aidos's and Kallos's pairs are disagreements a player without that taste settles by chance.
    expect(root?.size('aidos')).toBe(0);
    expect(root?.size('kallos')).toBe(0);
  }, 120_000);

  it('refuses a base it cannot score and a path that is not there, naming the key', () => {
    const at = writeRootMemoir(join(dir, 'b'), 12);
    expect(() =>
      loadRootSet({ root_memoir: at, data_dir: join(dir, 'b'), base_fingerprints: ['sha256:other'] }),
    ).toThrow(UsageError);
    expect(() =>
      loadRootSet({ root_memoir: join(dir, 'nowhere'), data_dir: dir, base_fingerprints: [BUILTIN_FINGERPRINT] }),
    ).toThrow(/root_memoir/);
    expect(loadRootSet({ root_memoir: null, data_dir: dir, base_fingerprints: [] })).toBeNull();
  });

  it("an update trained on the shared craft raises the root pairs' margin and lowers their loss; the same update reversed does the opposite", async () => {
    const home = join(dir, 'c');
    const root = loadRootSet({
      root_memoir: writeRootMemoir(home, 12),
      data_dir: home,
      base_fingerprints: [BUILTIN_FINGERPRINT],
    });
    if (!root) throw new Error('no root set');
    const { councilView } = await import('../../src/train/examples/views.js');
    const { openIndex } = await import('../../src/memoir-index/memoir-index.js');
    const { updateIndexed } = await import('../../src/memoir-index/indexed.js');
    const { resolveMemoirs } = await import('../../src/memoir/file/discover.js');
    const spec = builtinBaseSpec();
    const base = new BaseModel(spec);
    const enc = inputEncoder(spec);
    const layout = layoutOf(adapterLayout(spec, 'techne', DEFAULT_SETTINGS.rank));
    const { appendLines } = await import('../../src/memoir/file/append.js');
    const { memoirPathFor } = await import('../../src/memoir/file/discover.js');
    const { synthSessions } = await import('../../src/memoir/sample/synth.js');
    const { profileFor } = await import('../../src/memoir/sample/planted/profiles.js');
    // A craft-only forge's clipped update (S = 1) trained from `from`.
    const step = (seed: number, from: Float32Array): Float32Array => {
      const home = join(dir, `forge-${seed}`);
      for (const s of synthSessions({ seed, sessions: 6, turns: 12, profile: profileFor(`forge-${seed}`, []) }))
        appendLines(memoirPathFor(home, `forge-${seed}`, 'p', s.sessionId), s.lines, { fsync: false });
      const index = openIndex(join(home, 'index'));
      let examples: Example[];
      try {
        const source = { index, files: updateIndexed(index, resolveMemoirs([home], home, '/')).fileIds };
        examples = councilView(source, 'techne').examples as Example[];
      } finally {
        index.close();
      }
      const start = tensorsToLora(
        spec,
        'techne',
        DEFAULT_SETTINGS.rank,
        layout.tensors.map((t) => ({ ...t, data: from.subarray(t.offset, t.offset + t.size) })),
      );
      const out = train(base, (t, p) => enc(t, p), {
        agent: 'techne',
        kind: 'council',
        examples,
        start,
        frozen: [],
        settings: { ...DEFAULT_SETTINGS, epochs: 3, patience: 3, seed: 5 },
      });
      if (out.status !== 'trained') throw new Error(out.reason);
      const trained = new Float32Array(layout.size);
      loraToTensors(spec, 'techne', out.lora).forEach((t, i) => trained.set(t.data, layout.tensors[i]?.offset));
      const raw = trained.map((v, i) => v - (from[i] as number));
      const n = Math.sqrt(raw.reduce((a, v) => a + v * v, 0));
      return raw.map((v) => v / Math.max(1, n));
    };
    // Round 2: the global has learnt a step (from the public initialisation, where B = 0, LoRA's
    // bilinear ΔB·ΔA term makes an update and its reverse act alike).
    const init = publicInitFlat(layout, 'techne');
    const u1 = step(77, init);
    const global = init.map((v, i) => v + (u1[i] as number));
    const u = step(78, global);
    const [honest, reversed] = root.effects('techne', layout, global, [u, u.map((v) => -v)]);
    expect(honest?.margin).toBeGreaterThan(0);
    expect(reversed?.margin).toBeLessThan(0);
    expect(honest?.loss).toBeLessThan(0);
    expect(reversed?.loss).toBeGreaterThan(0);
  }, 180_000);
});
