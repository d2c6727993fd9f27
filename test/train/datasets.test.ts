import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ExitCode, KouraiError } from '../../src/errors.js';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';
import { convertCodeRefinement } from '../../src/train/datasets/code-refinement.js';
import {
  DEVELOPMENT_PERCENT,
  examplesFromLines,
  evaluateSplit,
  foldOf,
  groupOf,
  pairedGap,
  partFolds,
  partOf,
  pooledInterval,
  type Fold,
  type PairCase,
} from '../../src/train/datasets/held-out.js';
import { convertHhRlhf } from '../../src/train/datasets/hh-rlhf.js';
import { localDatasets } from '../../src/train/datasets/local.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import { DEFAULT_SETTINGS } from '../../src/train/trainer.js';

const REF = fileURLToPath(new URL('../fixtures/python/memoir_ref.py', import.meta.url));
const probe = spawnSync('python3', ['-c', 'import pydantic'], { encoding: 'utf8' });
const havePydantic = probe.status === 0;
const noPydantic = `the converters' Python-host byte check did NOT run: python3 cannot import pydantic (${(probe.stderr ?? '').trim().split('\n').pop() ?? `exit ${probe.status}`})`;

const hhLine = (prompt: string, a: string, b: string): string =>
  JSON.stringify({
    chosen: `\n\nHuman: ${prompt}\n\nAssistant: ${a}`,
    rejected: `\n\nHuman: ${prompt}\n\nAssistant: ${b}`,
  });
const hhFile = (): Buffer =>
  gzipSync(
    [
      hhLine('How do I boil an egg?', 'Put it in boiling water for nine minutes.', 'Eggs are great. 🥚'),
      hhLine('What is "café" in English?', 'It means coffee, or a small restaurant.', 'No idea.'),
      hhLine('Can you help?', 'Sure — what do you need?\nTell me more.', 'Sure — what do you need?\nTell me more.'),
    ].join('\n'),
  );

function pythonCheck(lines: readonly string[]): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kourai-pycheck-'));
  try {
    const file = join(dir, 'memoir.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = spawnSync('python3', [REF, 'check', file], { encoding: 'utf8' });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function refused(fn: () => unknown): KouraiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof KouraiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('dataset converters write memoirs as a Python host does', () => {
  it('hh-rlhf: a task description and a proposal with the pair per line; identical answers skipped; byte-canonical for pydantic', (ctx) => {
    const c = convertHhRlhf(hhFile(), 'test.jsonl.gz');
    expect(c).toMatchObject({ pairs: 2, skipped: 1 });
    expect(c.lines).toHaveLength(4);
    const [desc, prop] = c.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(desc).toMatchObject({
      source: 'task_description',
      context: { task_type: 'qa' },
      agent_proposed: 'Human: How do I boil an egg?',
      split: { shared_eligible: false, private_only: true },
    });
    expect(prop).toMatchObject({
      agent: 'metis',
      source: 'specialist_proposed',
      context: { task_type: 'qa' },
      affinity_delta: 0,
    });
    expect(c.lines[2]).toContain('"Human: What is \\"café\\" in English?"');
    if (!havePydantic) ctx.skip(noPydantic);
    const r = pythonCheck(c.lines);
    expect(r.out).toContain('checked 4 lines: 0 bad');
    expect(r.status).toBe(0);
  });

  it('code refinement: one modified proposal per line, the revision as delta; byte-canonical for pydantic', (ctx) => {
    const c = convertCodeRefinement(
      { bytes: Buffer.from('void f ( ) { a ( ) ; }\nint g ( ) { return 1 ; }\n'), path: 'x.buggy' },
      { bytes: Buffer.from('void f ( ) { if ( ok ) a ( ) ; }\nint g ( ) { return 1 ; }\n'), path: 'x.fixed' },
    );
    expect(c).toMatchObject({ pairs: 1, skipped: 1 });
    expect(JSON.parse(c.lines[0] as string)).toMatchObject({
      agent: 'techne',
      context: { task_type: 'code' },
      agent_proposed: 'void f ( ) { a ( ) ; }',
      player_response: { kind: 'modified', delta: 'void f ( ) { if ( ok ) a ( ) ; }' },
    });
    if (!havePydantic) ctx.skip(noPydantic);
    expect(pythonCheck(c.lines).status).toBe(0);
  });

  it('the examples: one pair per line with the dialogue as its prompt, no outcome row beside it', () => {
    const { examples, cases } = examplesFromLines(convertHhRlhf(hhFile(), 't').lines, 'metis');
    expect(examples.map((e) => e.kind)).toEqual(['pair', 'pair']);
    expect(examples[0]).toMatchObject({
      chosen: 'Put it in boiling water for nine minutes.',
      rejected: 'Eggs are great. 🥚',
      prompt: 'Human: How do I boil an egg?',
      chosenBy: 'choice',
    });
    expect(cases.size).toBe(2);
  });

  it('refuses files that are not what the converter expects: one line, exit 5, naming the file (and line)', () => {
    const cases: [() => unknown, RegExp][] = [
      [
        () =>
          convertHhRlhf(
            Buffer.from('version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 875191\n'),
            'helpful-base/test.jsonl.gz',
          ),
        /^helpful-base\/test\.jsonl\.gz: is a Git LFS pointer, not the data$/,
      ],
      [() => convertHhRlhf(gzipSync('{"chosen": "x"'), 'a.jsonl.gz'), /^a\.jsonl\.gz line 1: is not JSON$/],
      [
        () => convertHhRlhf(Buffer.from('{"prompt": "x", "response": "y"}\n'), 'b.jsonl'),
        /^b\.jsonl line 1: has no "chosen" and "rejected" strings$/,
      ],
      [() => convertHhRlhf(Buffer.from([0x1f, 0x8b, 0, 1, 2]), 'c.jsonl.gz'), /^c\.jsonl\.gz: is a damaged gzip file$/],
      [
        () =>
          convertCodeRefinement(
            { bytes: Buffer.from('f ( ) { }\n'), path: 'd.buggy' },
            { bytes: Buffer.from('f ( ) { }\ng ( ) { }\n'), path: 'd.fixed' },
          ),
        /^d\.fixed: has 2 lines, d\.buggy has 1: the files are not line-aligned$/,
      ],
      [
        () =>
          convertCodeRefinement(
            { bytes: Buffer.from('{"chosen": 1}\n'), path: 'e.buggy' },
            { bytes: Buffer.from('just words\n'), path: 'e.fixed' },
          ),
        /^e\.fixed line 1: is not a method/,
      ],
    ];
    for (const [fn, msg] of cases) {
      const err = refused(fn);
      expect(err.exitCode).toBe(ExitCode.invalidData);
      expect(err.message).toMatch(msg);
      expect(err.message).not.toContain('\n');
    }
  });
});

describe('k-fold held-out figures', () => {
  const pc = (i: number, prompt: string | null): PairCase => ({
    scene: `s-${i}`,
    chosen: `a${i}`,
    rejected: `b${i}`,
    prompt,
    proposal: `p${i}`,
    chosenFirst: true,
  });

  it('a fixed hash of the conversation puts about 40% of the groups in the development part, and a group in one part', () => {
    const cases = Array.from({ length: 3000 }, (_, i) => pc(i, `conversation ${i % 1500}`));
    const dev = cases.filter((c) => partOf(c) === 'development').length;
    expect(Math.abs(dev / cases.length - DEVELOPMENT_PERCENT / 100)).toBeLessThan(0.04);
    // the same conversation asked twice lands in one part and one fold
    for (let i = 0; i < 1500; i++) {
      expect(partOf(cases[i] as PairCase)).toBe(partOf(cases[i + 1500] as PairCase));
      expect(foldOf(groupOf(cases[i] as PairCase), 5)).toBe(foldOf(groupOf(cases[i + 1500] as PairCase), 5));
    }
    // without a prompt the proposal groups, then the scene
    expect(groupOf(pc(1, null))).toBe('p1');
    expect(groupOf({ ...pc(1, null), proposal: null })).toBe('s-1');
  });

  it('the report folds hold out every report pair once and never a development pair; development folds never see the report part', () => {
    const cases = Array.from({ length: 1000 }, (_, i) => pc(i, `conversation ${i}`));
    const report = new Set(cases.filter((c) => partOf(c) === 'report').map((c) => c.scene));
    const dev = new Set(cases.filter((c) => partOf(c) === 'development').map((c) => c.scene));
    const rf = partFolds(cases, 'report', 5);
    const held = rf.flatMap((f) => [...f.test]);
    expect(held.sort()).toEqual([...report].sort());
    for (const f of rf) {
      for (const s of dev) expect(f.train.has(s)).toBe(true);
      for (const s of f.test) expect(f.train.has(s)).toBe(false);
      expect(f.train.size + f.test.size).toBe(cases.length);
    }
    const df = partFolds(cases, 'development', 5);
    expect(df.flatMap((f) => [...f.test]).sort()).toEqual([...dev].sort());
    for (const f of df) for (const s of [...f.train, ...f.test]) expect(dev.has(s)).toBe(true);
  });

  it('every scene is held out in exactly one fold, and the folds are near equal', () => {
    const scenes = Array.from({ length: 2000 }, (_, i) => `s-${i}`);
    const sizes = [0, 0, 0, 0, 0];
    for (const s of scenes) {
      const f = foldOf(s, 5);
      expect(Number.isInteger(f) && f >= 0 && f < 5).toBe(true);
      expect(foldOf(s, 5)).toBe(f);
      sizes[f] = (sizes[f] as number) + 1;
    }
    for (const n of sizes) expect(Math.abs(n - 400)).toBeLessThan(60);
  });

  it('another fold seed draws another partition of the same part, each pair still held out once', () => {
    const cases = Array.from({ length: 1000 }, (_, i) => pc(i, `conversation ${i % 700}`));
    const d0 = partFolds(cases, 'development', 5);
    const d1 = partFolds(cases, 'development', 5, 1);
    const held = (fs: Fold[]): string[] => fs.flatMap((f) => [...f.test]).sort();
    expect(held(d1)).toEqual(held(d0));
    // seed 0 is the default partition; seed 1 moves most pairs to another fold
    expect(partFolds(cases, 'development', 5, 0)).toEqual(d0);
    const foldIn = (fs: Fold[], s: string): number => fs.findIndex((f) => f.test.has(s));
    const moved = held(d0).filter((s) => foldIn(d0, s) !== foldIn(d1, s)).length;
    expect(moved / held(d0).length).toBeGreaterThan(0.6);
    // a conversation asked twice still shares a fold
    for (let i = 0; i < 300; i++) {
      const a = cases[i] as PairCase;
      const b = cases[i + 700] as PairCase;
      expect(foldOf(groupOf(a), 5, 1)).toBe(foldOf(groupOf(b), 5, 1));
    }
  });

  it('pooled intervals: the normal interval of a mean; a paired gap is narrower than its two intervals suggest', () => {
    // 100 outcomes, 60 right: mean 0.6, sd √(0.24·100/99), half-width 1.96·sd/10
    const xs = Array.from({ length: 100 }, (_, i) => (i < 60 ? 1 : 0));
    const x = pooledInterval(xs);
    const h = (1.96 * Math.sqrt((0.24 * 100) / 99)) / 10;
    expect(x.mean).toBeCloseTo(0.6, 12);
    expect(x.hi - x.mean).toBeCloseTo(h, 12);
    // b is a right only where a is too, on 5 fewer pairs: the gap is 0.05 on every resample
    const ys = xs.map((v, i) => (i < 55 ? v : 0));
    const g = pooledInterval(pairedGap(xs, ys));
    expect(g.mean).toBeCloseTo(0.05, 12);
    expect(g.hi - g.lo).toBeLessThan(x.hi - x.lo);
    expect(g.lo).toBeGreaterThan(0);
  });
});

describe('real data (KOURAI_DATASETS)', () => {
  it('the learned model, through the real train path, beats prefer-shorter on held-out CodeXGLUE refinements', async (ctx) => {
    const found = localDatasets(process.env).find(
      (f) => f.status === 'found' && f.dataset.name.startsWith('codexglue'),
    );
    if (!found || found.status !== 'found') {
      const why = localDatasets(process.env).find((f) => f.status === 'missing' && f.name === 'codexglue-refinement');
      ctx.skip(
        `real-data learning was NOT checked: ${why?.status === 'missing' ? why.reason : 'dataset missing'} (see src/train/datasets/local.ts)`,
      );
      return;
    }
    const spec = builtinBaseSpec();
    const { examples, cases } = examplesFromLines(found.dataset.convert({ limit: 1500 }).lines, 'techne');
    const r = evaluateSplit(
      examples,
      cases,
      {
        base: new BaseModel(spec),
        encode: inputEncoder(spec),
        agent: 'techne',
        settings: { ...DEFAULT_SETTINGS, epochs: 0, heldOutFraction: 0.2 },
      },
      partFolds(cases.values(), 'all', 5)[0] as Fold,
      0,
    );
    expect(r.testPairs).toBeGreaterThan(60);
    expect(r.model).toBeGreaterThan(r.rules.prefer_shorter + 0.05);
    const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
    await ctx.annotate(
      `real-data learning: ${found.dataset.name}, ${r.testPairs} held-out pairs: model ${pct(r.model)}, prefer shorter ${pct(r.rules.prefer_shorter)}`,
      'proof',
    );
  }, 300_000);
});
