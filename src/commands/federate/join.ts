import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { defaultEventsMemoir } from '../../federation/round/events-memoir.js';
import { joinCouncil, type JoinFindings } from '../../federation/round/join.js';
import { checkCouncilUrl, membershipPath } from '../../federation/round/membership.js';
import { colors } from '../../output/color.js';
import { resolvePrivacyConfig } from '../../privacy/privacy-config.js';
import { defineCommand } from '../types.js';
import { councilTransport, forgeBase, readToken } from './shared.js';

const options = z.object({
  server: z.string({ error: 'required: the council URL, e.g. https://council.example.org' }).min(1),
  token: z.string().optional(),
  tokenFile: z.string().optional(),
  json: z.boolean().default(false),
});

export interface JoinResult extends JoinFindings {
  joined: true;
  /** Where the membership (with the token) is stored: a file only you can read. */
  credentials: string;
  events_memoir: string;
  /** The forge's own σ and S (the council's policy is followed only when at least as private). */
  forge_privacy: { clip_norm: number; noise_multiplier: number };
}

/**
 * `kourai federate join --server URL --token T`: checks the council (protocol, token, base model)
 * and stores the membership. Says what it found; stores nothing when a check fails.
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<JoinResult> {
    const home = kouraiHome(ctx);
    const url = checkCouncilUrl(opts.server);
    const token = await readToken(ctx, opts);
    const privacy = resolvePrivacyConfig({ home, env: ctx.env }).config;
    const base = await forgeBase(ctx, home);
    let fingerprint: string;
    try {
      fingerprint = base.fingerprint;
    } finally {
      base.close();
    }
    const { findings, membership } = await joinCouncil({ home, url, token, forgeFingerprint: fingerprint, transport: councilTransport(ctx, { url, token }), eventsMemoir: defaultEventsMemoir(home), now: ctx.now() });
    return { joined: true, ...findings, credentials: membershipPath(home), events_memoir: membership.events_memoir, forge_privacy: { clip_norm: privacy.clipNorm, noise_multiplier: privacy.noiseMultiplier } };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const p = r.privacy_policy;
    const mine = r.forge_privacy;
    const policy = !p
      ? c.dim(`the council sets no privacy policy: this forge's σ = ${mine.noise_multiplier}, S = ${mine.clip_norm} apply`)
      : p.noise_multiplier >= mine.noise_multiplier
        ? `σ = ${p.noise_multiplier}, S = ${p.clip_norm} — at least as private as this forge's σ = ${mine.noise_multiplier}: followed`
        : c.yellow(`σ = ${p.noise_multiplier}, S = ${p.clip_norm} — less private than this forge's σ = ${mine.noise_multiplier}: nothing will be sent unless you lower yours`);
    return [
      c.green(`joined the council at ${r.url} as forge "${r.forge}"`) + (r.replaced ? c.dim(` (instead of ${r.replaced})`) : ''),
      `  protocol   v${r.protocol} (council kourai ${r.council_version}), current round ${r.current_round ?? 'none'}`,
      `  base model ${r.base.forge} ${c.green('accepted')}`,
      `  privacy    ${policy}`,
      `  trust      ${r.trust.toFixed(3)}${r.exiled ? c.red(' — this forge is EXILED: the council refuses its updates') : ''}`,
      c.dim(`  credentials in ${r.credentials} (only you can read it); council events go to ${r.events_memoir}`),
      c.dim('  next: kourai federate consent, then kourai federate round --dry-run'),
    ].join('\n');
  },
});
