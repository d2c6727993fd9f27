import type { Ctx } from '../../context.js';
import type { CouncilScene } from '../../federation/round/scenes.js';
import { runScreen } from '../mount.js';
import { palette } from '../../output/theme.js';
import { CouncilSceneApp } from './council-scene-view.js';
import type { SceneOutcome } from './use-council-scene-state.js';

/** Plays the scenes on the terminal until the player has stepped through them, skipped, or cancelled. */
export async function showCouncilScenes(ctx: Ctx, scenes: readonly CouncilScene[]): Promise<SceneOutcome> {
  return runScreen<SceneOutcome>(
    ctx,
    (finish) => <CouncilSceneApp scenes={scenes} palette={palette(ctx.colorLevel)} onDone={finish} />,
    { onStdinEnd: 'skipped', onAbort: 'cancelled' },
  );
}
