import { z } from 'zod';
import type { Ctx } from '../../context.js';
import { CancelledError, UsageError, NotFoundError } from '../../errors.js';
import type { Agent } from '../../memoir/format/agents.js';
import { colors } from '../../output/color.js';
import { writeNdjson } from '../../output/json.js';
import { writeText } from '../../output/notice.js';
import { storyEventText } from '../../output/story-text.js';
import { StoryCursor } from '../../replay/cursor.js';
import { storyRecord } from '../../replay/records.js';
import type { StoryFilter } from '../../replay/story.js';
import { walkStory } from '../../replay/walk.js';
import { fullTextBuilder } from '../../memoir-index/indexed.js';
import { StoryIndex } from '../../memoir-index/story-queries.js';
import { assertTerminalFits, MIN_SIZE } from '../../ui/terminal.js';
import { defineCommand } from '../types.js';
import { filterShape } from '../options.js';
import { openIndexed } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { replay as spec } from './commands.js';

const options = optionsSchema(spec, {
  agent: filterShape.agent,
  at: z.string().min(1).optional(),
});

export interface ReplayResult {
  mode: 'screen' | 'text' | 'ndjson';
  sessions: number;
  /** Beats in the view (after the agent filter). */
  beats: number;
  /** Screen mode: the beat shown when the player quit. */
  last_entry_id: string | null;
}

export default defineCommand({
  options,
  streams: (o) => o.json || o.ndjson,
  async run(opts, ctx: Ctx): Promise<ReplayResult> {
    const ndjson = opts.json || opts.ndjson;
    const screen = ctx.interactive && !ndjson;
    if (opts.at !== undefined && !screen)
      throw new UsageError(
        '--at: only the replay screen starts at an entry; the text and NDJSON replays tell the whole story',
        'drop --at, or see one entry with `kourai memoir show ID`',
      );
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, { quiet: ndjson || screen });
    // The screen searches (/): a full-text index a bulk load left unbuilt is built by its first search, with progress there.
    const textIndex = screen ? fullTextBuilder(index, fileIds) : null;
    try {
      const nav = new StoryCursor(new StoryIndex(index, fileIds));
      const present = nav.agents();
      const missing = opts.agent.filter((a) => !present.includes(a as Agent));
      if (missing.length > 0) {
        throw new NotFoundError(
          `no entries for ${missing.join(', ')} in ${fileIds.length} memoir${fileIds.length === 1 ? '' : 's'}`,
          `agents in these memoirs: ${present.join(', ') || 'none'}`,
        );
      }
      const filter: StoryFilter = { agents: opts.agent as Agent[] };
      const beats = nav.count(filter);
      if (screen) {
        const size = assertTerminalFits(ctx, MIN_SIZE.replay, 'replay screen', 'pass --no-input for the text replay');
        const [{ showReplay }, { initialReplayState }] = await Promise.all([
          import('../../ui/replay/screen.js'),
          import('../../ui/replay/use-replay-state.js'),
        ]);
        const initial = initialReplayState(nav, {
          agents: filter.agents,
          ...(opts.at ? { at: opts.at } : {}),
          needsTextIndex: textIndex !== null,
        });
        const { how, last } = await showReplay(ctx, nav, initial, size, textIndex ?? undefined);
        if (how === 'cancel') throw new CancelledError('replay cancelled');
        return {
          mode: 'screen',
          sessions: nav.sessions.length,
          beats,
          last_entry_id: last.ref ? nav.beat(last.ref).entry_id : null,
        };
      }
      const c = colors(ctx.colorLevel);
      const width = ctx.stdout.columns ?? 120;
      for (const ev of walkStory(nav, filter, ctx.signal)) {
        if (ndjson) writeNdjson(ctx.stdout, storyRecord(ev));
        else writeText(ctx, storyEventText(ev, c, width));
      }
      if (ctx.signal.aborted) throw new CancelledError('replay cancelled');
      return { mode: ndjson ? 'ndjson' : 'text', sessions: nav.sessions.length, beats, last_entry_id: null };
    } finally {
      await textIndex?.settled(); // a build stopped by Esc or Ctrl-C has rolled back
      index.close();
    }
  },
  render(r, ctx) {
    if (r.mode !== 'text') return '';
    return colors(ctx.colorLevel).dim(
      `${r.beats} beat${r.beats === 1 ? '' : 's'} in ${r.sessions} session${r.sessions === 1 ? '' : 's'}`,
    );
  },
});
