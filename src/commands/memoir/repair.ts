import { openForReading } from '../../memoir/file/reader.js';
import { closeSync } from 'node:fs';
import { kouraiHome, type Ctx } from '../../context.js';
import { resolveMemoirs } from '../../memoir/file/discover.js';
import { repairMemoir, type RepairOutcome } from '../../memoir/file/repair.js';
import { findTornTail, quarantinePath, readBytes } from '../../memoir/file/quarantine.js';
import { Journal } from '../../memoir/file/journal.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { optionsSchema } from '../spec-schema.js';
import { repair as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface RepairResult {
  dry_run: boolean;
  repaired: {
    path: string;
    reason: 'torn_tail' | 'uncommitted_batch';
    offset: number;
    length: number;
    kept_after: number;
    quarantine: string;
    preview: string;
  }[];
  notes: { path: string; note: string }[];
  clean: number;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<RepairResult> {
    const paths = resolveMemoirs(opts.memoir, kouraiHome(ctx), ctx.cwd);
    const repaired: RepairResult['repaired'] = [];
    const notes: RepairResult['notes'] = [];
    for (const path of paths) {
      if (ctx.signal.aborted) break;
      const outcome = opts.dryRun ? survey(path) : repairMemoir(path, { now: ctx.now, signal: ctx.signal });
      for (const r of outcome.repaired) repaired.push({ path, ...r });
      for (const note of outcome.notes) notes.push({ path, note });
    }
    return { dry_run: opts.dryRun, repaired, notes, clean: paths.length - new Set(repaired.map((r) => r.path)).size };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const lines = r.notes.map((n) => `${c.yellow('note')}: ${n.path}: ${n.note}`);
    if (r.repaired.length === 0)
      return [
        ...lines,
        c.green(`nothing to repair: ${r.clean} memoir${r.clean === 1 ? '' : 's'} end with a complete line`),
      ].join('\n');
    const verb = r.dry_run ? 'would quarantine' : 'quarantined';
    for (const x of r.repaired) {
      const what = x.reason === 'torn_tail' ? 'a torn tail' : 'an unfinished batch';
      lines.push(
        `${verb} ${what} of ${x.length} bytes at offset ${x.offset} of ${x.path} -> ${x.quarantine}${x.kept_after ? ` (${x.kept_after} bytes written after it kept)` : ''}\n  ${c.dim(JSON.stringify(x.preview))}`,
      );
    }
    return lines.join('\n');
  },
});

/** What repair would do, without the lock and without writing anything. */
function survey(path: string): RepairOutcome {
  const out: RepairOutcome = { repaired: [], notes: [] };
  const journal = new Journal(path, false);
  try {
    const pending = journal.pending(true);
    if (pending)
      out.notes.push(
        `a ${pending.entry.op === 'putback' ? 'putback' : 'batch'} left unfinished by a kourai writer that died: repair will finish or roll it back`,
      );
  } finally {
    journal.close();
  }
  const fd = openForReading(path);
  try {
    const tail = findTornTail(fd);
    if (tail) {
      out.repaired.push({
        reason: 'torn_tail',
        offset: tail.offset,
        length: tail.length,
        kept_after: 0,
        quarantine: quarantinePath(path),
        preview: readBytes(fd, tail.offset, Math.min(tail.length, 320)).toString('utf8').slice(0, 80),
      });
    }
  } finally {
    closeSync(fd);
  }
  return out;
}
