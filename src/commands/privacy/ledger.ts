import { kouraiHome, type Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { parseAgentList } from '../../privacy/consent.js';
import { budgetState } from '../../privacy/budget.js';
import { checkLedger } from '../../privacy/ledger-anchor.js';
import { localAnchors } from '../../federation/round/ledger-anchors.js';
import { PrivacyLedger } from '../../store/privacy-ledger.js';
import { openStateDbReadOnly, statePath } from '../../store/state-db.js';
import { defineCommand } from '../types.js';
import { budgetFlags } from '../options.js';
import { delta as fmtDelta, epsilon as fmtEps, ratio } from '../../format.js';
import { privacyConfigFor } from '../../privacy/privacy-config.js';
import { optionsSchema } from '../spec-schema.js';
import { ledger as spec } from './commands.js';

const options = optionsSchema(spec, { ...budgetFlags });

export interface LedgerEntry {
  id: number;
  round: string;
  agent: string;
  noise_multiplier: number;
  clip_norm: number;
  sample_rate: number;
  delta: number;
  /** Cumulative ε of the agent / the forge after this release, at the δ recorded with it. */
  epsilon_agent: number;
  epsilon_forge: number;
  created_at: string;
  /** False when the process stopped between spending and drawing: spent, nothing sent. */
  noise_drawn: boolean;
  /** Local only: ||clip(Δ)|| (<= S) and the norm of what was released. */
  clipped_norm: number | null;
  released_norm: number | null;
  events: { event: string; detail: string | null; at: string }[];
}

export interface LedgerResult {
  path: string;
  delta: number;
  releases: LedgerEntry[];
  /** ε spent now, at the configured δ, recomputed from every release's parameters. */
  spent: { forge: number; agents: Record<string, number> };
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<LedgerResult> {
    const agents = parseAgentList(opts.agent, '--agent');
    const { config } = privacyConfigFor(ctx, opts);
    const home = kouraiHome(ctx);
    const db = openStateDbReadOnly(home);
    try {
      const ledger = new PrivacyLedger(db);
      const rows = ledger.releases();
      checkLedger(rows, ledger.envelopes(), localAnchors(home));
      const norms = ledger.norms();
      const events = ledger.events();
      const state = budgetState(rows);
      const spentAgents: Record<string, number> = {};
      for (const [a, acc] of state.agents) spentAgents[a] = acc.epsilon(config.delta).epsilon;
      return {
        path: statePath(home),
        delta: config.delta,
        releases: rows
          .filter((r) => agents.length === 0 || agents.includes(r.agent as never))
          .map((r) => ({
            id: r.id,
            round: r.round,
            agent: r.agent,
            noise_multiplier: r.noiseMultiplier,
            clip_norm: r.clipNorm,
            sample_rate: r.sampleRate,
            delta: r.delta,
            epsilon_agent: r.epsilonAgent,
            epsilon_forge: r.epsilonForge,
            created_at: r.createdAt,
            noise_drawn: norms.has(r.id),
            clipped_norm: norms.get(r.id)?.clippedNorm ?? null,
            released_norm: norms.get(r.id)?.releasedNorm ?? null,
            events: events
              .filter((e) => e.releaseId === r.id)
              .map((e) => ({ event: e.event, detail: e.detail, at: e.at })),
          })),
        spent: { forge: state.forge.epsilon(config.delta).epsilon, agents: spentAgents },
      };
    } finally {
      db.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.releases.length === 0) return c.dim(`no releases recorded (${r.path})`);
    const table = renderTable(r.releases, [
      { header: '#', get: (e) => String(e.id), align: 'right' },
      { header: 'ROUND', get: (e) => e.round },
      { header: 'AGENT', get: (e) => e.agent },
      { header: 'σ', get: (e) => String(e.noise_multiplier), align: 'right' },
      { header: 'S', get: (e) => String(e.clip_norm), align: 'right' },
      { header: 'ε AGENT', get: (e) => fmtEps(e.epsilon_agent), align: 'right' },
      { header: 'ε FORGE', get: (e) => fmtEps(e.epsilon_forge), align: 'right' },
      {
        header: '|clip Δ|/S',
        get: (e) => (e.clipped_norm === null ? c.yellow('not drawn') : ratio(e.clipped_norm / e.clip_norm)),
        align: 'right',
      },
      { header: 'OUTCOME', get: (e) => e.events.at(-1)?.event ?? c.dim('—') },
      { header: 'AT', get: (e) => e.created_at },
    ]);
    return `${table}\n${c.dim(`forge ε spent: ${fmtEps(r.spent.forge)} at δ = ${fmtDelta(r.delta)} over ${r.releases.length} shown release${r.releases.length === 1 ? '' : 's'}`)}`;
  },
});
