import type { StrategyConfig } from '../aggregation/strategy.js';
import type { CouncilConfig } from './config.js';

/**
 * The settings a round freezes when it opens (rounds.strategy_json): the aggregation rule and
 * how updates are weighed. A round is always aggregated with the settings it opened with, even
 * if the council restarts with a different configuration meanwhile.
 */
export type RoundSettings = StrategyConfig & { weights: 'uniform' | 'counts' };

export function roundSettingsOf(c: CouncilConfig): RoundSettings {
  return {
    strategy: c.strategy,
    f: c.byzantine,
    ...(c.trim !== null ? { trim: c.trim } : {}),
    ...(c.multikrum_m !== null ? { m: c.multikrum_m } : {}),
    ...(c.selection !== null ? { selection: c.selection } : {}),
    loraFair: { lambda: c.lora_fair_lambda, lr: c.lora_fair_lr, steps: c.lora_fair_steps, solver: c.lora_fair_solver },
    weights: c.weights,
  };
}

export function parseRoundSettings(json: string): RoundSettings {
  return JSON.parse(json) as RoundSettings;
}
