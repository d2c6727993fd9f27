/**
 * The gate every council delta passes before it leaves the forge. The federation round calls:
 *
 *   const gate = PrivacyGate.open({ home, config, random: ctx.secureRandom, now: ctx.now });
 *   const plan = gate.planRound({ round, shareable });          // who speaks, who is silent and why
 *   for (const a of plan.agents.filter((p) => p.speaks)) {
 *     const out = gate.recordRelease({ round, agent: a.agent, delta, baseFingerprint });  // ledger row, THEN noise
 *     send(out.release);                                         // exactly what may leave
 *     gate.recordOutcome(out.releaseId, 'submitted');            // or 'failed': never refunded
 *   }
 *   gate.close();
 *
 * recordRelease re-checks consent and budget inside the ledger transaction, so a plan that has
 * gone stale (consent revoked, another process spent budget) cannot overspend.
 */
import {
  BudgetExhaustedError,
  ConflictError,
  ExitCode,
  IntegrityError,
  InvalidDataError,
  KouraiError,
  UsageError,
} from '../errors.js';
import type { NamedTensor } from '../tensor/tensor.js';
import { isAgent, isBondOnly, type Agent, type FederatingAgent } from '../memoir/format/agents.js';
import { openStateDb, openStateDbReadOnly } from '../store/state-db.js';
import { ConsentStore } from '../store/consent-store.js';
import { PrivacyLedger, type ReleaseEvent, type ReleaseRow } from '../store/privacy-ledger.js';
import type { DB } from '../store/db.js';
import { checkRelease, planRound, ROUND_SAMPLE_RATE, type RoundPlan } from './budget.js';
import { checkTensors } from './clip.js';
import { noConsent, type ConsentMap } from './consent.js';
import { GaussianSampler, type SecureBytes } from './gaussian-noise.js';
import { deltaDigest, forgeNoise, type NoiseStreams } from './noise-key.js';
import { checkLedger, type Anchors } from './ledger-anchor.js';
import type { PrivacyConfig } from './privacy-config.js';
import { buildRelease, parseStoredRelease, releaseJson, type CouncilRelease } from './release.js';

export interface ReleaseOutcome {
  releaseId: number;
  /** True when this (agent, round) was already released: the same noised document is returned, nothing new is spent. */
  reused: boolean;
  /** Exactly what may leave the forge. */
  release: CouncilRelease;
  /** Cumulative ε after this release (at the configured δ). */
  epsilonAgent: number;
  epsilonForge: number;
  /** Local only, never sent. */
  local: { clippedNorm: number; releasedNorm: number };
}

export class PrivacyGate {
  readonly db: DB;
  readonly ledger: PrivacyLedger;
  readonly consent: ConsentStore;
  readonly config: PrivacyConfig;
  /** What the ledger is checked against before anything reads or spends it (ledger-anchor.ts). */
  readonly anchors: Anchors;
  private readonly noise: NoiseStreams;
  private readonly now: () => Date;

  /** `noise`: where each release's noise bytes come from (keyed by the forge's secret: src/privacy/noise-key.ts). */
  constructor(db: DB, opts: { config: PrivacyConfig; noise: NoiseStreams; now?: () => Date; anchors?: Anchors }) {
    this.db = db;
    this.ledger = new PrivacyLedger(db);
    this.consent = new ConsentStore(db);
    this.config = opts.config;
    this.anchors = opts.anchors ?? {};
    this.noise = opts.noise;
    this.now = opts.now ?? (() => new Date());
  }

  /** Every release, after the one ledger check (chain, documents, anchors): exit 8 when it fails. */
  releases(): ReleaseRow[] {
    const rows = this.ledger.releases();
    checkLedger(rows, this.ledger.envelopes(), this.anchors);
    return rows;
  }

  /**
   * The same ledger and consent under other mechanism settings (the council's published S and σ
   * for a round). Shares the database: close only the gate that opened it.
   */
  withConfig(config: PrivacyConfig): PrivacyGate {
    return new PrivacyGate(this.db, { config, noise: this.noise, now: this.now, anchors: this.anchors });
  }

  /**
   * Opens `$KOURAI_HOME/kourai.db`. Noise is keyed by the forge's secret (`random` creates it on
   * the first release) unless `noise` says otherwise (tests). The caller closes the gate.
   */
  static open(opts: {
    home: string;
    config: PrivacyConfig;
    random: SecureBytes;
    noise?: NoiseStreams;
    now?: () => Date;
    anchors?: Anchors;
  }): PrivacyGate {
    return new PrivacyGate(openStateDb(opts.home), {
      config: opts.config,
      noise: opts.noise ?? forgeNoise(opts.home, opts.random),
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.anchors ? { anchors: opts.anchors } : {}),
    });
  }

  /** For planning only (`whisper`): creates nothing, works on a read-only home; recording a release fails. */
  static openReadOnly(opts: { home: string; config: PrivacyConfig; now?: () => Date; anchors?: Anchors }): PrivacyGate {
    const noise: NoiseStreams = () => {
      throw new Error('a read-only privacy gate cannot draw noise');
    };
    return new PrivacyGate(openStateDbReadOnly(opts.home), {
      config: opts.config,
      noise,
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.anchors ? { anchors: opts.anchors } : {}),
    });
  }

  close(): void {
    this.db.close();
  }

  consentMap(): ConsentMap {
    const m = noConsent();
    for (const c of this.consent.current()) m[c.agent] = c.allowed;
    return m;
  }

  /** Who speaks next round and why the others stay silent. `shareable`: shareable entries per agent. */
  planRound(p: { round?: string | null; shareable: Readonly<Partial<Record<Agent, number>>> }): RoundPlan {
    return planRound({
      releases: this.releases(),
      consent: this.consentMap(),
      shareable: p.shareable,
      config: this.config,
      round: p.round ?? null,
    });
  }

  /**
   * Spends budget for one agent's delta and returns the release. Order: validate the delta;
   * append and commit the ledger row (consent and budget checked inside the transaction); draw
   * the noise (keyed: the same round and delta always get the same noise); store the noised
   * document. A crash after the commit leaves the budget spent.
   */
  recordRelease(p: {
    round: string;
    agent: string;
    delta: readonly NamedTensor[];
    baseFingerprint: string;
  }): ReleaseOutcome {
    const agent = federatingAgent(p.agent);
    if (typeof p.round !== 'string' || p.round.trim() === '')
      throw new UsageError('round: a non-empty round id is required');
    checkTensors(p.delta);
    if (p.delta.length === 0) throw new InvalidDataError('delta: no tensors to release');
    if (typeof p.baseFingerprint !== 'string' || p.baseFingerprint === '')
      throw new UsageError('base fingerprint: required (the base model the adapter is over)');

    const previous = this.ledger.find(agent, p.round);
    if (previous) {
      this.releases(); // nothing is spent, but nothing is handed out from a ledger that fails its check
      return this.reuse(previous, p.baseFingerprint);
    }

    const { config } = this;
    let row: ReleaseRow;
    try {
      row = this.ledger.append(
        {
          round: p.round,
          agent,
          noiseMultiplier: config.noiseMultiplier,
          clipNorm: config.clipNorm,
          sampleRate: ROUND_SAMPLE_RATE,
          delta: config.delta,
        },
        (existing) => {
          checkLedger(existing, this.ledger.envelopes(), this.anchors);
          if (existing.some((r) => r.agent === agent && r.round === p.round)) throw new AlreadyReleased();
          if (!this.consentMap()[agent]) {
            throw new KouraiError(`${agent} has no consent to speak for the forge; nothing was released`, {
              exitCode: ExitCode.conflict,
              code: 'no_consent',
              hint: `kourai federate consent --allow ${agent}`,
            });
          }
          const verdict = checkRelease(existing, agent, config);
          if (!verdict.ok) {
            const [who, eps, budget] =
              verdict.reason === 'agent_budget'
                ? [agent, verdict.epsilonAgent, config.agentEpsilon]
                : ['the forge', verdict.epsilonForge, config.forgeEpsilon];
            throw new BudgetExhaustedError(
              `${agent}: one more release would bring ${who === agent ? 'its' : "the forge's"} ε to ${eps.toFixed(3)}, over the budget of ${budget} (δ = ${config.delta.toExponential()}); nothing was released`,
              `${agent} stays silent; see \`kourai whisper\``,
            );
          }
          return { epsilonAgent: verdict.epsilonAgent, epsilonForge: verdict.epsilonForge };
        },
        this.now(),
      );
    } catch (err) {
      if (err instanceof AlreadyReleased)
        return this.reuse(this.ledger.find(agent, p.round) as ReleaseRow, p.baseFingerprint);
      throw err;
    }

    // The row is committed: from here on the budget is spent, whatever happens.
    const noise = this.noise({
      round: p.round,
      agent,
      clipNorm: row.clipNorm,
      noiseMultiplier: row.noiseMultiplier,
      deltaDigest: deltaDigest(p.delta),
    });
    const built = buildRelease({
      round: p.round,
      agent,
      baseFingerprint: p.baseFingerprint,
      delta: p.delta,
      clipNorm: row.clipNorm,
      noiseMultiplier: row.noiseMultiplier,
      sampler: new GaussianSampler(noise),
    });
    this.ledger.attachPayload({
      releaseId: row.id,
      clippedNorm: built.local.clippedNorm,
      releasedNorm: built.local.releasedNorm,
      payload: releaseJson(built.release),
      createdAt: this.now().toISOString(),
    });
    return {
      releaseId: row.id,
      reused: false,
      release: built.release,
      epsilonAgent: row.epsilonAgent,
      epsilonForge: row.epsilonForge,
      local: { clippedNorm: built.local.clippedNorm, releasedNorm: built.local.releasedNorm },
    };
  }

  /**
   * The release an agent already drew for a round (the same document, nothing spent), or null when
   * it has none. A round resumed after an interruption resends this instead of training again.
   */
  released(agent: string, round: string, baseFingerprint: string): ReleaseOutcome | null {
    const row = this.ledger.find(federatingAgent(agent), round);
    return row ? this.reuse(row, baseFingerprint) : null;
  }

  /** Records what happened to a release (submitted, failed, acknowledged). Spent budget stays spent. */
  recordOutcome(releaseId: number, event: ReleaseEvent, detail?: string): void {
    this.ledger.recordEvent(releaseId, event, detail ?? null, this.now());
  }

  private reuse(row: ReleaseRow, baseFingerprint: string): ReleaseOutcome {
    const stored = this.ledger.payload(row.id);
    if (!stored) {
      throw new ConflictError(
        `${row.agent} already spent budget in round ${row.round} (release ${row.id}) but its noised delta is not stored: another process is drawing it, or the process stopped in between. The budget stays spent; ${row.agent} is silent this round`,
        'kourai privacy ledger',
      );
    }
    let release: CouncilRelease;
    try {
      release = parseStoredRelease(JSON.parse(stored.payload), { baseFingerprint });
    } catch {
      throw new IntegrityError(
        `privacy ledger is corrupt: the stored release ${row.id} (${row.agent}, round ${row.round}) is unreadable; nothing was released`,
      );
    }
    return {
      releaseId: row.id,
      reused: true,
      release,
      epsilonAgent: row.epsilonAgent,
      epsilonForge: row.epsilonForge,
      local: { clippedNorm: stored.clippedNorm, releasedNorm: stored.releasedNorm },
    };
  }
}

class AlreadyReleased extends Error {}

function federatingAgent(name: string): FederatingAgent {
  if (!isAgent(name)) throw new UsageError(`agent: unknown agent ${JSON.stringify(name)}`);
  if (isBondOnly(name))
    throw new UsageError(`agent: ${name} is bond-only and has no council voice; nothing was released`);
  return name as FederatingAgent;
}
