import type { FederatingAgent } from '../memoir/format/agents.js';
import { budgetState, checkRelease, ROUND_SAMPLE_RATE, type SpentRelease } from '../privacy/budget.js';
import { DEFAULT_PRIVACY_CONFIG, type PrivacyConfig } from '../privacy/privacy-config.js';

/**
 * Every simulated forge's own Whisper ledger. A release is charged as a real forge charges it
 * (q = 1: the forge trusts no council, so no amplification by sampling), and before it is made the
 * real ledger's check (`checkRelease`) decides: a release that would take the agent's or the
 * forge's ε past its lifetime budget is not made. The forge sits that agent out and spends nothing,
 * as `federate round` does. Only forges that release through the privacy code consult it (a
 * crafted attack cares for no budget); a clip-only round (σ = 0, ε = ∞) is no DP release and is
 * neither checked nor charged.
 */
export class ForgeLedgers {
  private readonly spent = new Map<number, SpentRelease[]>();
  private readonly held = new Set<number>();

  constructor(private readonly config: PrivacyConfig = DEFAULT_PRIVACY_CONFIG) {}

  /**
   * Whether forge `i` may release for `agent` in `round` at noise σ; if so the release is charged.
   * A refusal marks the forge as having reached its limit.
   */
  release(i: number, agent: FederatingAgent, round: number, sigma: number): boolean {
    if (!(sigma > 0)) return true;
    const mine = this.spent.get(i) ?? [];
    const check = checkRelease(mine, agent, { ...this.config, noiseMultiplier: sigma });
    if (!check.ok) {
      this.held.add(i);
      return false;
    }
    mine.push({ agent, round: `sim-${round}`, noiseMultiplier: sigma, sampleRate: ROUND_SAMPLE_RATE });
    this.spent.set(i, mine);
    return true;
  }

  /** Forges that sat out at least once because a release would pass their lifetime budget. */
  get limited(): number {
    return this.held.size;
  }

  /** The largest ε any forge's own ledger charged (all its agents' releases composed). */
  maxEpsilon(): number {
    let max = 0;
    for (const releases of this.spent.values())
      max = Math.max(max, budgetState(releases).forge.epsilon(this.config.delta).epsilon);
    return max;
  }
}
