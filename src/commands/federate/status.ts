import { kouraiHome, type Ctx } from '../../context.js';
import { federationStatus, type FederationStatus } from '../../federation/round/status.js';
import { readMembership } from '../../federation/round/membership.js';
import { colors } from '../../output/color.js';
import { note } from '../../output/notice.js';
import { bar, percent } from '../../privacy/whisper-report.js';
import { localAnchors } from '../../federation/round/ledger-anchors.js';
import { PrivacyGate } from '../../privacy/round-gate.js';
import { delta as fmtDelta, epsilon as fmtEps } from '../../format.js';
import { privacyConfigFor } from '../../privacy/privacy-config.js';
import { budgetFlags } from '../options.js';
import { defineCommand } from '../types.js';
import { councilTransport } from '../../federation/round/forge-round.js';
import { floorText } from '../../output/round-text.js';
import { optionsSchema } from '../spec-schema.js';
import { status as spec } from './commands.js';

const options = optionsSchema(spec, { ...budgetFlags });

/**
 * `kourai federate status`: the council endpoint, what it says now (round, trust, exile), consent
 * and whisper capacity per agent, the last rounds, a round left unfinished, the ledger's anchors.
 * A council that cannot be reached is reported, not an error (--offline does not ask it).
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<FederationStatus> {
    const home = kouraiHome(ctx);
    const { config } = privacyConfigFor(ctx, opts);
    const membership = readMembership(home);
    const gate = PrivacyGate.openReadOnly({ home, config, now: ctx.now });
    try {
      return await federationStatus({
        membership,
        transport:
          membership && !opts.offline
            ? councilTransport(ctx, membership, { retries: 1, timeoutMs: 15_000, onWait: (line) => note(ctx, line) })
            : null,
        rows: gate.ledger.releases(),
        envelopes: gate.ledger.envelopes(),
        local: localAnchors(home, membership),
        consent: gate.consentMap(),
        config,
      });
    } finally {
      gate.close();
    }
  },
  /** A ledger that no longer matches its anchors is exit 8 (the status is still printed). */
  exitCode: (s) => (s.ledger.ok ? 0 : 8),
  render(s, ctx) {
    const c = colors(ctx.colorLevel);
    const lines: string[] = [];
    if (!s.council)
      lines.push(c.yellow('not joined to a council') + c.dim(' (kourai federate join --server URL --token T)'));
    else {
      lines.push(
        `${c.bold('council')}  ${s.council.url} as forge "${s.council.forge}" ${c.dim(`(joined ${s.council.joined_at})`)}`,
      );
      if (s.reachable === false) lines.push(c.yellow(`  unreachable: ${s.error ?? ''}`));
      const r = s.current_round;
      if (r) {
        const policy = r.privacy_policy
          ? `council policy σ = ${r.privacy_policy.noise_multiplier}, S = ${r.privacy_policy.clip_norm}${s.floor.council_policy_outside ? c.red(" (outside this forge's privacy floor: a round sends nothing)") : ' (inside the floor)'}`
          : 'no council privacy policy';
        lines.push(
          `  round ${r.round} ${r.state}, ${r.forges_sealed}/${r.min_forges} forges sealed, deadline ${r.deadline}; ${policy}${r.submitted.length ? `; this forge sent ${r.submitted.join(', ')}${r.sealed ? ' (sealed)' : ''}` : ''}`,
        );
      }
      lines.push(`  privacy floor ${floorText(s.floor)}`);
      if (s.trust)
        lines.push(
          `  trust ${s.trust.trust.toFixed(3)}${s.trust.threshold !== null ? c.dim(` (exile below ${s.trust.threshold})`) : ''}${s.trust.exiled ? c.red(`  EXILED after round ${s.trust.exiled_round ?? '?'}: the Stoa has fallen for this forge`) : ''}${s.trust.source === 'memoir' ? c.dim(' (as of the last round)') : ''}`,
        );
      if (s.unfinished_round)
        lines.push(
          c.yellow(
            `  round ${s.unfinished_round.round} is unfinished (${s.unfinished_round.released.join(', ')} released): kourai federate round resumes it`,
          ),
        );
    }
    lines.push(
      s.ledger.ok
        ? c.dim('  ledger matches its anchors (memoir, council receipts)')
        : c.red(`  ${s.ledger.problem ?? 'ledger problem'}`),
    );
    lines.push('');
    lines.push(
      `${c.bold('whisper capacity')}  forge ${bar(s.forge.remaining_fraction, 16)} ${percent(s.forge.remaining_fraction)} left, ε ${fmtEps(s.forge.epsilon_spent)} of ${s.forge.epsilon_budget} at δ = ${fmtDelta(s.forge.delta)}; next round charged at σ = ${s.next_sigma.noise_multiplier} ${c.dim(s.next_sigma.source === 'council' ? "(the council's)" : "(this forge's; the council was not asked)")}`,
    );
    for (const a of s.agents) {
      if (a.consent === 'locked') {
        lines.push(`  ${a.agent.padEnd(10)} ${c.dim('bond-only: never leaves the forge')}`);
        continue;
      }
      const consent = a.consent ? c.green('consents') : c.yellow('silent  ');
      lines.push(
        `  ${a.agent.padEnd(10)} ${consent} ${bar(a.remaining_fraction ?? 0, 12)} ${percent(a.remaining_fraction ?? 0).padStart(4)} left  ${a.releases ?? 0} release${a.releases === 1 ? '' : 's'}${a.consent && !a.can_speak_next ? c.red('  cannot afford the next round') : ''}`,
      );
    }
    if (s.last_rounds.length) {
      lines.push('');
      lines.push(c.bold('last rounds'));
      for (const r of s.last_rounds) {
        lines.push(
          `  round ${r.round}: ${r.spoke.length ? `${r.spoke.join(', ')} spoke` : 'nobody spoke'}; ${r.came_back.length} adapter${r.came_back.length === 1 ? '' : 's'} came home; trust ${r.trust_after.toFixed(3)}${r.exiled ? c.red(' (exiled)') : ''}`,
        );
        if (r.silent.length)
          lines.push(
            c.dim(`    silent: ${r.silent.map((x) => `${x.agent} (${x.reason.replace(/_/g, ' ')})`).join(', ')}`),
          );
      }
    }
    return lines.join('\n');
  },
});
