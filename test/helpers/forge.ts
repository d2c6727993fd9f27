import { readFileSync } from 'node:fs';
import synth from '../../src/commands/memoir/synth.js';
import type { Ctx } from '../../src/context.js';
import { parseLine } from '../../src/memoir/format/parse.js';
import type { MemoirEntry } from '../../src/memoir/format/schema.js';
import { testCtx } from './ctx.js';

/** Writes the sample forge (`kourai memoir synth`) into `home`; returns its memoir paths in write order. */
export async function sampleForge(
  home: string,
  opts: { sessions?: number; turns?: number; seed?: number } = {},
): Promise<string[]> {
  const ctx: Ctx = testCtx({ home });
  const r = await synth.run(
    synth.options.parse({
      sessions: String(opts.sessions ?? 4),
      turns: String(opts.turns ?? 12),
      seed: String(opts.seed ?? 7),
    }),
    ctx,
  );
  return r.memoirs;
}

/** The entries of a memoir file, parsed (derived ids for Python lines, as the index assigns them). */
export function readEntries(path: string): MemoirEntry[] {
  const counts = new Map<string, number>();
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const p = parseLine(l, (base) => {
        const n = (counts.get(base) ?? 0) + 1;
        counts.set(base, n);
        return n;
      });
      if (!p.ok) throw new Error(p.message);
      return p.entry;
    });
}

export function lineCount(path: string): number {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '').length;
}
