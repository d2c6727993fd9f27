import type { Ctx } from '../../context.js';
import type { StoryNav } from '../../replay/story.js';
import type { TextIndexBuilder } from '../../memoir-index/indexed.js';
import { runScreen } from '../mount.js';
import { palette } from '../../output/theme.js';
import type { ScreenSize } from '../terminal.js';
import { ReplayApp } from './replay-view.js';
import type { ReplayState } from './use-replay-state.js';

/** Shows the replay screen until the player quits; resolves with how it ended and where. */
export async function showReplay(
  ctx: Ctx,
  nav: StoryNav,
  initial: ReplayState,
  size: ScreenSize,
  textIndex?: TextIndexBuilder,
): Promise<{ how: 'quit' | 'cancel'; last: ReplayState }> {
  return runScreen<{ how: 'quit' | 'cancel'; last: ReplayState }>(
    ctx,
    (finish) => (
      <ReplayApp
        nav={nav}
        initial={initial}
        palette={palette(ctx.colorLevel)}
        size={size}
        onDone={(how, last) => finish({ how, last })}
        {...(textIndex ? { textIndex } : {})}
      />
    ),
    { onStdinEnd: { how: 'quit', last: initial }, onAbort: { how: 'cancel', last: initial } },
  );
}
