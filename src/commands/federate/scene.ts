import { resolve } from 'node:path';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { CancelledError, NotFoundError, UsageError } from '../../errors.js';
import { readMembership } from '../../federation/round/membership.js';
import { sceneOf, sceneText, type CouncilScene } from '../../federation/round/scenes.js';
import { readCouncilEvents } from '../../memoir/derive/council-event.js';
import { defineCommand } from '../types.js';
import { optionsSchema } from '../spec-schema.js';
import { scene as spec } from './commands.js';

const options = optionsSchema(spec, {
  round: z.preprocess(
    (v) => (v === undefined ? undefined : Number(v)),
    z
      .number({ error: 'not a number' })
      .int({ error: 'a round is a whole number' })
      .min(1, { error: 'rounds start at 1' })
      .optional(),
  ),
});

export interface SceneResult {
  round: number;
  memoir: string;
  events: { entry_id: string; beat: string }[];
  scenes: CouncilScene[];
  /** How the player watched (interactive runs only): to the end, or skipped. */
  attendance: 'watched' | 'skipped' | null;
}

/** Plays a round's Council of Sisters and Stoa Falls from the memoir's council_event entries. */
export async function playScenes(ctx: Ctx, scenes: readonly CouncilScene[]): Promise<'watched' | 'skipped'> {
  const { showCouncilScenes } = await import('../../ui/council/show-council-scene.js');
  const outcome = await showCouncilScenes(ctx, scenes);
  if (outcome === 'cancelled') throw new CancelledError('the council scene was stopped');
  return outcome;
}

/**
 * `kourai federate scene [--round N]`: the Council of Sisters (and the Stoa Falls, when a forge
 * fell) of a round, from the memoir. An Ink scene in a terminal (step through or skip), the lines
 * as text elsewhere, the scene as data with --json.
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<SceneResult> {
    const home = kouraiHome(ctx);
    const m = readMembership(home);
    const path = opts.memoir ? resolve(ctx.cwd, opts.memoir) : m?.events_memoir;
    if (!path)
      throw new UsageError(
        'this forge has not joined a council: pass --memoir PATH to read council events from a memoir',
      );
    const events = readCouncilEvents(path).filter((e) => !m || opts.memoir || e.details.council === m.council_key);
    if (events.length === 0) throw new NotFoundError(`no council events in ${path}`, 'run kourai federate round first');
    const round = opts.round ?? (events[events.length - 1] as (typeof events)[number]).details.round;
    const mine = events.filter((e) => e.details.round === round);
    if (mine.length === 0)
      throw new NotFoundError(
        `no council event for round ${round} in ${path} (rounds: ${[...new Set(events.map((e) => e.details.round))].join(', ')})`,
      );
    const scenes = mine.map((e) => sceneOf(e.details));
    const attendance = ctx.interactive && !opts.json ? await playScenes(ctx, scenes) : null;
    return {
      round,
      memoir: path,
      events: mine.map((e) => ({ entry_id: e.entryId, beat: e.details.beat })),
      scenes,
      attendance,
    };
  },
  render(r, ctx) {
    if (ctx.interactive)
      return r.attendance === 'skipped' ? 'skipped: the scene stays in the memoir (kourai federate scene)' : '';
    return r.scenes.map(sceneText).join('\n\n');
  },
});
