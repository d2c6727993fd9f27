import { z } from 'zod';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { renderHistory, resolveRevisions, type HistoryEntry } from './history.js';
import { findEntryRow } from './lookup.js';
import { entryView, loadRowLine, openIndexed } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { show as spec } from './commands.js';

const options = optionsSchema(spec, { id: z.string().min(1) });

export interface ShowResult {
  entry: Record<string, unknown>;
  /**
   * The entry's line exactly as its memoir holds it, without the line ending: a Python host's keys
   * and number spellings as written, and no `entry_id` where the line has none (`entry` carries the
   * derived one).
   */
  line: string;
  /** The id asked for when it was superseded (`entry` is its newest revision), else null. */
  resolved_from: string | null;
  /** With --history: the whole revision chain, original first. */
  history: HistoryEntry[] | null;
  /** The chain forks or loops (see `memoir verify`), else null. */
  revision_warning: string | null;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ShowResult> {
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, { quiet: opts.json });
    try {
      // An id in several memoirs (identical Python lines copied between sessions): the first.
      const found = findEntryRow(index, fileIds, opts.id, { firstOfSeveral: true });
      // Reads resolve to the newest revision.
      const { row, resolvedFrom, warning, history } = resolveRevisions(index, fileIds, found, opts.history);
      // The memoir is the source of truth: its bytes, not a re-encoding of what kourai read from them.
      const { entry, line } = loadRowLine(row);
      return {
        entry: entryView(row, entry),
        line,
        resolved_from: resolvedFrom,
        history,
        revision_warning: warning,
      };
    } finally {
      index.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const e = r.entry as Record<string, unknown> & {
      _memoir: { path: string; line: number; shareable: boolean; split_reason: string; lenient_split: boolean };
    };
    const m = e._memoir;
    const head = [
      `${c.bold(String(e.entry_id))}  ${String(e.scene_id)}`,
      `${c.dim('memoir')}  ${m.path}:${m.line}`,
      `${c.dim('split')}   ${m.shareable ? c.green('shared') : c.yellow('private')} (${m.split_reason}${m.lenient_split ? ', the line claims shared: lenient upstream split' : ''})`,
    ];
    if (r.resolved_from)
      head.unshift(
        c.yellow(`${r.resolved_from} was superseded: showing its newest revision (all revisions: --history)`),
      );
    if (r.revision_warning) head.unshift(c.yellow(`warning: ${r.revision_warning}`));
    const { _memoir: _m, ...body } = e;
    const history = r.history ? `${renderHistory(r.history, c)}\n\n` : '';
    return `${history}${head.join('\n')}\n${JSON.stringify(body, null, 2)}`;
  },
});
