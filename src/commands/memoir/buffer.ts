import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { fsError } from '../../errors.js';
import type { BufferDecision, ReplayBuffer } from '../../memoir/derive/replay-buffer.js';
import { colors } from '../../output/color.js';
import { oneLine, renderTable } from '../../output/table.js';
import type { EntryRow } from '../../memoir-index/memoir-index.js';
import { replayBufferFromIndex } from '../../memoir-index/replay-candidates.js';
import { defineCommand } from '../types.js';
import { filterChecks, toFilter } from '../options.js';
import { openIndexed } from './shared.js';
import { warn } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { buffer as spec } from './commands.js';

const options = optionsSchema(spec, {
  ...filterChecks,
  max: z.coerce
    .number({
      error: (iss) => (iss.input === undefined ? 'is required: the bound, a whole number of entries' : undefined),
    })
    .int()
    .min(0),
});

/** Where `memoir buffer` writes its manifest unless --out says otherwise. */
export function defaultManifestPath(home: string): string {
  return join(home, 'cache', 'replay-buffer.json');
}

export interface BufferRow extends BufferDecision {
  scene_id: string;
  agent: string;
  source: string;
  entry_type: string;
  path: string;
  line: number;
}

export interface BufferResult {
  dry_run: boolean;
  bound: number;
  candidates: number;
  load_bearing: number;
  kept_count: number;
  dropped_count: number;
  over_bound: boolean;
  warnings: string[];
  /** The manifest written (null with --dry-run). */
  manifest: string | null;
  kept: BufferRow[];
  dropped: BufferRow[];
}

/** The manifest a trainer reads: the kept entries, where they are, and why. */
export interface BufferManifest {
  version: 1;
  created_at: string;
  bound: number;
  filters: Record<string, unknown>;
  memoirs: string[];
  candidates: number;
  load_bearing: number;
  over_bound: boolean;
  warnings: string[];
  kept: {
    entry_id: string;
    path: string;
    line: number;
    offset: number;
    length: number;
    load_bearing: boolean;
    rank: number | null;
    reasons: string[];
  }[];
}

/** Written beside the target and renamed over it: a reader never sees half a manifest. */
function writeManifest(path: string, manifest: BufferManifest, suffix: string): void {
  const tmp = `${path}.${suffix}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(tmp, path);
  } catch (err) {
    throw fsError(err, 'replay buffer manifest', path);
  }
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<BufferResult> {
    const filter = toFilter({ ...opts, text: undefined });
    const { index, fileIds, paths } = await openIndexed(ctx, opts.memoir, { quiet: opts.json });
    let buffer: ReplayBuffer;
    let rows: Map<string, EntryRow>;
    try {
      ({ buffer, rows } = replayBufferFromIndex(index, { ...filter, files: fileIds }, opts.max));
    } finally {
      index.close();
    }
    const view = (d: BufferDecision): BufferRow => {
      const r = rows.get(d.entry_id) as EntryRow;
      return {
        entry_id: d.entry_id,
        kept: d.kept,
        load_bearing: d.load_bearing,
        rank: d.rank,
        reasons: d.reasons,
        why: d.why,
        scene_id: r.scene_id,
        agent: r.agent,
        source: r.source,
        entry_type: r.entry_type,
        path: r.path,
        line: r.line,
      };
    };
    for (const w of buffer.warnings) warn(ctx, w);
    let manifest: string | null = null;
    if (!opts.dryRun) {
      manifest = opts.out ? resolve(ctx.cwd, opts.out) : defaultManifestPath(kouraiHome(ctx));
      const { memoir: _m, dryRun: _d, out: _o, json: _j, max: _x, ...shownFilters } = opts;
      writeManifest(
        manifest,
        {
          version: 1,
          created_at: ctx.now().toISOString(),
          bound: buffer.bound,
          filters: shownFilters,
          memoirs: paths,
          candidates: buffer.candidates,
          load_bearing: buffer.load_bearing,
          over_bound: buffer.over_bound,
          warnings: buffer.warnings,
          kept: buffer.kept.map((d) => {
            const r = rows.get(d.entry_id) as EntryRow;
            return {
              entry_id: d.entry_id,
              path: r.path,
              line: r.line,
              offset: r.offset,
              length: r.length,
              load_bearing: d.load_bearing,
              rank: d.rank,
              reasons: d.reasons,
            };
          }),
        },
        ctx.secureRandom(6).toString('hex'),
      );
    }
    return {
      dry_run: opts.dryRun,
      bound: buffer.bound,
      candidates: buffer.candidates,
      load_bearing: buffer.load_bearing,
      kept_count: buffer.kept.length,
      dropped_count: buffer.dropped.length,
      over_bound: buffer.over_bound,
      warnings: buffer.warnings,
      manifest,
      kept: buffer.kept.map(view),
      dropped: buffer.dropped.map(view),
    };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const superseded = r.dropped.filter((d) => d.rank === null).length;
    const head = `replay buffer (bound ${r.bound}): keep ${r.kept_count} of ${r.candidates} entries — ${r.load_bearing} load-bearing, ${r.kept_count - r.load_bearing} most informative; drop ${r.dropped_count}${superseded ? ` (${superseded} superseded)` : ''}`;
    const out = [r.over_bound ? c.yellow(head) : head];
    if (r.dry_run) {
      const SHOW = 50;
      const width = Math.max(30, (ctx.stdout.columns ?? 120) - 75);
      const table = (rows: BufferRow[]): string =>
        renderTable(rows.slice(0, SHOW), [
          { header: 'RANK', get: (d) => (d.rank === null ? '-' : String(d.rank)), align: 'right' },
          { header: 'ENTRY', get: (d) => d.entry_id },
          { header: 'AGENT', get: (d) => d.agent },
          { header: 'SOURCE', get: (d) => d.source },
          { header: 'WHY', get: (d) => oneLine(d.why, width) },
        ]) + (rows.length > SHOW ? c.dim(`… and ${rows.length - SHOW} more (--json lists all)\n`) : '');
      out.push('', c.bold(`KEPT (${r.kept_count})`), r.kept.length ? table(r.kept) : c.dim('(none)\n'));
      out.push(c.bold(`DROPPED (${r.dropped_count})`), r.dropped.length ? table(r.dropped) : c.dim('(none)\n'));
      out.push(c.dim('dry run: nothing written'));
    } else {
      out.push(
        `manifest: ${r.manifest ?? ''}`,
        c.dim('the memoirs are unchanged; preview kept and dropped entries with --dry-run'),
      );
    }
    return out.join('\n');
  },
});
