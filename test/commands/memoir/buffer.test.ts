import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import buffer, { defaultManifestPath, type BufferManifest } from '../../../src/commands/memoir/buffer.js';
import supersede from '../../../src/commands/memoir/supersede.js';
import { readLineAt } from '../../../src/memoir/file/reader.js';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { lines, runCmd, sampleForge } from '../../helpers/memory.js';

const ctxs: TestCtx[] = [];
const newCtx = (): TestCtx => {
  const c = testCtx();
  ctxs.push(c);
  return c;
};
afterEach(() => {
  for (const c of ctxs.splice(0)) removeDir(c.home);
});

describe('memoir buffer', () => {
  it('--dry-run shows kept and dropped with reasons and writes nothing', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const sizes = memoirs.map((p) => statSync(p).size);
    const total = memoirs.flatMap(lines).length;
    const r = await runCmd(buffer, { max: '120', dryRun: true }, ctx);
    expect(r.dry_run).toBe(true);
    expect(r.manifest).toBeNull();
    expect(existsSync(defaultManifestPath(ctx.home))).toBe(false);
    expect(r.candidates).toBe(total);
    expect(r.kept_count).toBe(120);
    expect(r.kept_count + r.dropped_count).toBe(total);
    expect(r.over_bound).toBe(false);
    expect(r.kept.slice(0, r.load_bearing).every((d) => d.load_bearing && d.why.startsWith('load-bearing'))).toBe(true);
    expect(r.kept.slice(r.load_bearing).every((d) => !d.load_bearing && d.why.startsWith('informative'))).toBe(true);
    expect(r.dropped.every((d) => d.why.startsWith('below the bound'))).toBe(true);
    // every player revision and disagreement resolution is load-bearing, so kept
    const all = memoirs.flatMap(lines);
    const keptIds = new Set(r.kept.map((d) => d.entry_id));
    for (const l of all.filter((x) => x.source === 'player_revision' || x.source === 'disagreement_resolution')) {
      if (typeof l.entry_id === 'string') expect(keptIds.has(l.entry_id)).toBe(true);
    }
    const text = buffer.render?.(r, ctx) ?? '';
    expect(text).toContain(`keep 120 of ${total} entries`);
    expect(text).toContain('KEPT (120)');
    expect(text).toContain(`DROPPED (${r.dropped_count})`);
    expect(text).toContain('dry run: nothing written');
    expect(memoirs.map((p) => statSync(p).size)).toEqual(sizes);
  });

  it('adversarial: a bound below the load-bearing set keeps them all and warns on stderr', async () => {
    const ctx = newCtx();
    await sampleForge(ctx);
    const r = await runCmd(buffer, { max: '5', dryRun: true }, ctx);
    expect(r.over_bound).toBe(true);
    expect(r.kept_count).toBe(r.load_bearing);
    expect(r.load_bearing).toBeGreaterThan(5);
    expect(r.kept.every((d) => d.load_bearing)).toBe(true);
    expect(ctx.stderr.text).toMatch(
      new RegExp(`warning: load-bearing entries alone \\(${r.load_bearing}\\) exceed the bound \\(5\\)`),
    );
  });

  it('without --dry-run writes a manifest a trainer can load entries from; the memoirs are unchanged', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const sizes = memoirs.map((p) => statSync(p).size);
    const r = await runCmd(buffer, { max: '60' }, ctx);
    expect(r.manifest).toBe(defaultManifestPath(ctx.home));
    const m = JSON.parse(readFileSync(r.manifest as string, 'utf8')) as BufferManifest;
    expect(m).toMatchObject({
      version: 1,
      bound: 60,
      created_at: '2026-11-22T10:00:00.000Z',
      candidates: r.candidates,
      load_bearing: r.load_bearing,
    });
    expect(m.kept.map((k) => k.entry_id)).toEqual(r.kept.map((d) => d.entry_id));
    for (const k of m.kept.slice(0, 10)) {
      const line = JSON.parse(readLineAt(k.path, k.offset, k.length)) as MemoirEntry;
      if (!k.entry_id.startsWith('py_')) expect(line.entry_id).toBe(k.entry_id);
    }
    expect(memoirs.map((p) => statSync(p).size)).toEqual(sizes);
    const out = join(ctx.home, 'elsewhere', 'buf.json');
    const r2 = await runCmd(buffer, { max: '10', out: 'elsewhere/buf.json', agent: ['techne'] }, ctx);
    expect(r2.manifest).toBe(out);
    const m2 = JSON.parse(readFileSync(out, 'utf8')) as BufferManifest;
    expect(m2.filters).toMatchObject({ agent: ['techne'] });
    expect(r2.kept.every((d) => d.agent === 'techne')).toBe(true);
    expect(buffer.render?.(r2, ctx)).toContain(`manifest: ${out}`);
  });

  it('a corrected entry: its newest revision is load-bearing, the old one is dropped as superseded', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const target = lines(memoirs[0] as string).find((l) => l.source === 'puck_engagement') as MemoirEntry;
    const rev = await runCmd(supersede, { id: target.entry_id, patch: '{"affinity_delta":0.1}', reason: 'r' }, ctx);
    const r = await runCmd(buffer, { max: '0', dryRun: true }, ctx);
    expect(r.kept.find((d) => d.entry_id === rev.entry_id)?.reasons).toEqual(['revision_head']);
    expect(r.dropped.find((d) => d.entry_id === target.entry_id)).toMatchObject({
      rank: null,
      reasons: ['superseded'],
    });
  });

  it('rejects a missing or negative bound', () => {
    expect(() => buffer.options.parse({})).toThrow();
    expect(() => buffer.options.parse({ max: '-1' })).toThrow();
    expect(() => buffer.options.parse({ max: 'ten' })).toThrow();
  });
});
