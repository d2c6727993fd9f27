import { kouraiHome, type Ctx } from '../../context.js';
import { forgetKnownPolicy } from '../../federation/round/known-policy.js';
import { forgetMembership, readMembership } from '../../federation/round/membership.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { optionsSchema } from '../spec-schema.js';
import { leave as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface LeaveResult {
  /** False when the forge had not joined a council (nothing to forget). */
  left: boolean;
  url: string | null;
  forge: string | null;
}

/**
 * `kourai federate leave`: forgets the council's URL and the token. Spent privacy budget, consent
 * and the memoir's council events stay (they are the forge's history); the council keeps what it
 * received.
 */
export default defineCommand({
  options,
  async run(_opts, ctx: Ctx): Promise<LeaveResult> {
    const home = kouraiHome(ctx);
    const m = readMembership(home);
    const left = forgetMembership(home);
    forgetKnownPolicy(home);
    return { left, url: m?.url ?? null, forge: m?.forge ?? null };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (!r.left) return c.dim('this forge had not joined a council: nothing to forget');
    return `${c.green(`left the council at ${r.url ?? '?'}`)}: its URL and this forge's token are forgotten\n${c.dim('spent whisper capacity, consent and the council events in the memoir stay; what the council received stays there')}`;
  },
});
