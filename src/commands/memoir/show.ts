import { z } from 'zod';
import type { Ctx } from '../../context.js';
import { NotFoundError, UsageError } from '../../errors.js';
import { encodeEntry } from '../../memoir/encode.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { entryView, loadRow, memoirOpt, openIndexed } from './shared.js';

const options = z.object({
  id: z.string().min(1),
  memoir: memoirOpt,
  json: z.boolean().default(false),
});

export interface ShowResult {
  entry: Record<string, unknown>;
  line: string;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ShowResult> {
    const { index, fileIds } = openIndexed(ctx, opts.memoir, { quiet: opts.json });
    try {
      const files = new Set(fileIds);
      let rows = index.byEntryId(opts.id).filter((r) => files.has(r.file_id));
      if (rows.length === 0 && opts.id.length >= 6) {
        const like = index.db
          .prepare(`SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id WHERE e.entry_id >= ? AND e.entry_id < ? LIMIT 3`)
          .all(opts.id, `${opts.id}\uffff`) as typeof rows;
        rows = like.filter((r) => files.has(r.file_id));
        if (rows.length > 1) throw new UsageError(`entry id prefix "${opts.id}" is ambiguous (${rows.map((r) => r.entry_id).join(', ')}…)`);
      }
      const row = rows[0];
      if (!row) throw new NotFoundError(`no entry with id "${opts.id}" in ${fileIds.length} memoir${fileIds.length === 1 ? '' : 's'}`, 'list ids with `kourai memoir inspect`');
      const entry = loadRow(row);
      return { entry: entryView(row, entry), line: encodeEntry(entry) };
    } finally {
      index.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const e = r.entry as Record<string, unknown> & { _memoir: { path: string; line: number; shareable: boolean; split_reason: string; lenient_split: boolean } };
    const m = e._memoir;
    const head = [
      `${c.bold(String(e.entry_id))}  ${String(e.scene_id)}`,
      `${c.dim('memoir')}  ${m.path}:${m.line}`,
      `${c.dim('split')}   ${m.shareable ? c.green('shared') : c.yellow('private')} (${m.split_reason}${m.lenient_split ? ', the line claims shared: lenient upstream split' : ''})`,
    ];
    const { _memoir: _m, ...body } = e;
    return `${head.join('\n')}\n${JSON.stringify(body, null, 2)}`;
  },
});
