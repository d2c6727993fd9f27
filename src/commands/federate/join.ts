import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { defaultEventsMemoir } from '../../federation/round/events-memoir.js';
import { joinCouncil, type JoinFindings } from '../../federation/round/join.js';
import { checkCouncilUrl, membershipPath } from '../../federation/round/membership.js';
import { colors } from '../../output/color.js';
import { note } from '../../output/notice.js';
import { resolvePrivacyConfig } from '../../privacy/privacy-config.js';
import { applyCouncilPolicy, roundCost } from '../../privacy/council-policy.js';
import { defineCommand } from '../types.js';
import { councilTransport, forgeBase } from '../../federation/round/forge-round.js';
import { readToken } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { join as spec } from './commands.js';

const options = optionsSchema(spec, {
  server: z.string({ error: 'required: the council URL, e.g. https://council.example.org' }).min(1),
  retryFor: z
    .string()
    .default('1m')
    .transform((v, c) => {
      const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(v);
      if (!m) {
        c.addIssue({ code: 'custom', message: `"${v}" is not a duration (e.g. 30s, 5m)` });
        return z.NEVER;
      }
      return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
    }),
});

export interface JoinResult extends JoinFindings {
  joined: true;
  /** Where the membership (with the token) is stored: a file only you can read. */
  credentials: string;
  events_memoir: string;
  /** The forge's own σ and S (they apply to `privacy release`; a round uses the council's policy). */
  forge_privacy: { clip_norm: number; noise_multiplier: number };
  /** Whether rounds can follow the council's policy: ε of one release at its σ, or why not (the Whisper Limit cannot afford it). */
  council_policy: { followed: boolean; epsilon_per_release: number | null; reason: string | null } | null;
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
    const { findings, membership } = await joinCouncil({
      home,
      url,
      token,
      forgeFingerprint: fingerprint,
      transport: councilTransport(
        ctx,
        { url, token },
        { retryForMs: opts.retryFor, onWait: (line) => note(ctx, line) },
      ),
      eventsMemoir: defaultEventsMemoir(home),
      now: ctx.now(),
    });
    const p = findings.privacy_policy;
    const decision = p && applyCouncilPolicy(privacy, { clipNorm: p.clip_norm, noiseMultiplier: p.noise_multiplier });
    const council_policy =
      !p || !decision
        ? null
        : decision.ok
          ? { followed: true, epsilon_per_release: roundCost(p.noise_multiplier, privacy.delta), reason: null }
          : { followed: false, epsilon_per_release: null, reason: decision.message };
    return {
      joined: true,
      ...findings,
      credentials: membershipPath(home),
      events_memoir: membership.events_memoir,
      forge_privacy: { clip_norm: privacy.clipNorm, noise_multiplier: privacy.noiseMultiplier },
      council_policy,
    };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const p = r.privacy_policy;
    const mine = r.forge_privacy;
    const d = r.council_policy;
    const policy =
      !p || !d
        ? c.dim(
            `the council sets no privacy policy: this forge's σ = ${mine.noise_multiplier}, S = ${mine.clip_norm} apply`,
          )
        : d.followed
          ? `σ = ${p.noise_multiplier}, S = ${p.clip_norm} (the council's): each release costs an agent ε ${(d.epsilon_per_release ?? 0).toFixed(3)} of her Whisper Limit`
          : c.yellow(`σ = ${p.noise_multiplier}, S = ${p.clip_norm}: ${d.reason ?? 'not followed'}`);
    return [
      c.green(`joined the council at ${r.url} as forge "${r.forge}"`) +
        (r.replaced ? c.dim(` (instead of ${r.replaced})`) : ''),
      `  protocol   v${r.protocol} (council kourai ${r.council_version}), current round ${r.current_round ?? 'none'}`,
      `  base model ${r.base.forge} ${c.green('accepted')}`,
      `  privacy    ${policy}`,
      `  trust      ${r.trust.toFixed(3)}${r.exiled ? c.red(' — this forge is EXILED: the council refuses its updates') : ''}`,
      c.dim(`  credentials in ${r.credentials} (only you can read it); council events go to ${r.events_memoir}`),
      c.dim('  next: kourai federate consent, then kourai federate round --dry-run'),
    ].join('\n');
  },
});
