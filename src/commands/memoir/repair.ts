import { closeSync, openSync } from 'node:fs';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { fsError } from '../../errors.js';
import { resolveMemoirs } from '../../memoir/discover.js';
import { acquireLock } from '../../memoir/lock.js';
import { findTornTail, quarantinePath, quarantineTornTail } from '../../memoir/quarantine.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { memoirOpt } from './shared.js';

const options = z.object({ memoir: memoirOpt, dryRun: z.boolean().default(false), json: z.boolean().default(false) });

export interface RepairResult {
  dry_run: boolean;
  repaired: { path: string; offset: number; length: number; quarantine: string; preview: string }[];
  clean: number;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<RepairResult> {
    const paths = resolveMemoirs(opts.memoir, kouraiHome(ctx), ctx.cwd);
    const repaired: RepairResult['repaired'] = [];
    for (const path of paths) {
      const lock = opts.dryRun ? undefined : acquireLock(path);
      let fd: number;
      try {
        fd = openSync(path, opts.dryRun ? 'r' : 'r+');
      } catch (err) {
        lock?.release();
        throw fsError(err, 'memoir', path);
      }
      try {
        const tail = findTornTail(fd);
        if (!tail) continue;
        if (!opts.dryRun) quarantineTornTail(fd, path, tail, ctx.now());
        repaired.push({ path, offset: tail.offset, length: tail.length, quarantine: quarantinePath(path), preview: tail.bytes.toString('utf8').slice(0, 80) });
      } finally {
        closeSync(fd);
        lock?.release();
      }
    }
    return { dry_run: opts.dryRun, repaired, clean: paths.length - repaired.length };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.repaired.length === 0) return c.green(`nothing to repair: ${r.clean} memoir${r.clean === 1 ? '' : 's'} end with a complete line`);
    const verb = r.dry_run ? 'would quarantine' : 'quarantined';
    return r.repaired.map((x) => `${verb} ${x.length} bytes at offset ${x.offset} of ${x.path} -> ${x.quarantine}\n  ${c.dim(JSON.stringify(x.preview))}`).join('\n');
  },
});
