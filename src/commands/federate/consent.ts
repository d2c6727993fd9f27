import { kouraiHome, type Ctx } from '../../context.js';
import { CancelledError, UsageError } from '../../errors.js';
import { isBondOnly, type Agent, type FederatingAgent } from '../../memoir/format/agents.js';
import { colors } from '../../output/color.js';
import {
  applyFlags,
  CONSENT_MEANING,
  NEVER_LEAVES,
  noConsent,
  allowAndDeny,
  STANCES,
  type ConsentMap,
} from '../../privacy/consent.js';
import { ConsentStore } from '../../store/consent-store.js';
import { openStateDb, openStateDbReadOnly } from '../../store/state-db.js';
import { defineCommand } from '../types.js';
import { assertTerminalFits, MIN_SIZE } from '../../ui/terminal.js';
import { optionsSchema } from '../spec-schema.js';
import { consent as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface ConsentResult {
  /** True when this run recorded a decision. */
  changed: boolean;
  decision_id: number | null;
  via: 'scene' | 'flags' | null;
  /** Every agent in scene order, with its current stance. */
  agents: { agent: Agent; role: string; allowed: boolean; locked: boolean; decided_at: string | null }[];
  applies_from: 'next_round';
  never_leaves: string[];
}

function currentMap(store: ConsentStore): { map: ConsentMap; decidedAt: Map<string, string | null> } {
  const map = noConsent();
  const decidedAt = new Map<string, string | null>();
  for (const c of store.current()) {
    map[c.agent] = c.allowed;
    decidedAt.set(c.agent, c.decidedAt);
  }
  return { map, decidedAt };
}

function resultOf(store: ConsentStore, decisionId: number | null, via: ConsentResult['via']): ConsentResult {
  const { map, decidedAt } = currentMap(store);
  return {
    changed: decisionId !== null,
    decision_id: decisionId,
    via,
    agents: STANCES.map((s) => ({
      agent: s.agent,
      role: s.role,
      allowed: s.locked ? false : map[s.agent as FederatingAgent],
      locked: s.locked,
      decided_at: s.locked ? null : (decidedAt.get(s.agent) ?? null),
    })),
    applies_from: 'next_round',
    never_leaves: [...NEVER_LEAVES],
  };
}

/**
 * The Sovereignty Moment: the scene in a terminal, `--allow/--deny` anywhere. Every decision is
 * stored with its time in kourai.db and applies from the next federation round.
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ConsentResult> {
    const { allow, deny } = allowAndDeny(opts.allow, opts.deny);
    const withFlags = allow.length > 0 || deny.length > 0;
    if (withFlags && opts.show) throw new UsageError('--show cannot be combined with --allow or --deny');
    if (!withFlags && !opts.show && !ctx.interactive) {
      throw new UsageError(
        'the Sovereignty Moment needs an interactive terminal',
        'pass --allow a,b --deny c (e.g. --allow aidos,metis --deny kallos), or --show to see the current consent',
      );
    }
    const db = opts.show ? openStateDbReadOnly(kouraiHome(ctx)) : openStateDb(kouraiHome(ctx));
    try {
      const store = new ConsentStore(db);
      let decisionId: number | null = null;
      let via: 'scene' | 'flags' | null = null;
      if (withFlags) {
        const next = applyFlags(currentMap(store).map, allow, deny); // throws before anything is stored
        const named = [...allow, ...deny].filter((a): a is FederatingAgent => !isBondOnly(a));
        decisionId = store.record(
          named.map((agent) => ({ agent, allowed: next[agent] })),
          'flags',
          ctx.now(),
        );
        via = 'flags';
      } else if (!opts.show) {
        const size = assertTerminalFits(
          ctx,
          MIN_SIZE.consent,
          'Sovereignty Moment',
          'answer with flags: --allow a,b --deny c (or --show)',
        );
        const { showConsent } = await import('../../ui/consent/show-consent.js');
        const outcome = await showConsent(ctx, STANCES, currentMap(store).map, size);
        if (!outcome.confirmed && outcome.how === 'cancelled')
          throw new CancelledError('the Sovereignty Moment was cancelled: nothing was changed');
        if (!outcome.confirmed) return resultOf(store, null, null);
        decisionId = store.record(
          outcome.decision.filter((d): d is { agent: FederatingAgent; allowed: boolean } => !isBondOnly(d.agent)),
          'scene',
          ctx.now(),
        );
        via = 'scene';
      }
      return resultOf(store, decisionId, via);
    } finally {
      db.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const speak = r.agents.filter((a) => a.allowed).map((a) => a.agent);
    const lines: string[] = [];
    if (r.changed)
      lines.push(c.green(`consent recorded (decision ${r.decision_id}); it applies from the next federation round`));
    else lines.push(c.bold('current consent (the Sovereignty Moment)'));
    for (const a of r.agents) {
      const stance = STANCES.find((s) => s.agent === a.agent);
      const mark = a.locked ? c.dim('locked ') : a.allowed ? c.green('speaks ') : c.yellow('silent ');
      const when = a.decided_at
        ? c.dim(` (since ${a.decided_at})`)
        : a.locked
          ? c.dim(' (bond-only)')
          : c.dim(' (never decided)');
      lines.push(`  ${mark} ${a.agent.padEnd(10)} ${c.dim(`${a.role}: “${stance?.line ?? ''}”`)}${when}`);
    }
    lines.push(
      speak.length
        ? `may speak for the forge: ${speak.join(', ')}`
        : c.yellow('nobody may speak for the forge: no council delta will leave'),
    );
    if (!r.changed) for (const l of CONSENT_MEANING) lines.push(c.dim(`· ${l}`));
    lines.push(c.dim('never leaves the forge:'));
    for (const l of r.never_leaves) lines.push(c.dim(`  · ${l}`));
    return lines.join('\n');
  },
});
