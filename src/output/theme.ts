import type { TierName } from '../affinity/affinity.js';
import type { Agent } from '../memoir/format/agents.js';
import type { Felt } from '../memoir/format/sources.js';

/**
 * The palette of every screen and of the text views: chalk colour names, which Ink's `color` prop
 * and `chalk[name]` both accept. Pure data (no Ink here), so text output can use it without
 * loading React. `palette(0)` is colourless: NO_COLOR and --no-color apply to Ink screens too.
 */
export type ColorName =
  | 'red'
  | 'green'
  | 'yellow'
  | 'blue'
  | 'magenta'
  | 'cyan'
  | 'white'
  | 'gray'
  | 'redBright'
  | 'greenBright'
  | 'yellowBright'
  | 'blueBright'
  | 'magentaBright'
  | 'cyanBright'
  | 'whiteBright';

export const AGENT_COLOR: Readonly<Record<Agent, ColorName>> = {
  hephaestus: 'redBright',
  metis: 'blueBright',
  techne: 'cyan',
  dokimasia: 'green',
  kallos: 'magenta',
  mneme: 'yellow',
  aidos: 'whiteBright',
  aletheia: 'blue',
  cupid: 'magentaBright',
  puck: 'greenBright',
};

export const TIER_COLOR: Readonly<Record<TierName, ColorName>> = {
  stranger: 'gray',
  familiar: 'cyan',
  trusted: 'green',
  bonded: 'magentaBright',
};

export const FELT_COLOR: Readonly<Record<Felt, ColorName>> = { right: 'green', off: 'red', unsure: 'yellow' };

export interface Palette {
  accent: ColorName | undefined;
  muted: ColorName | undefined;
  ok: ColorName | undefined;
  warn: ColorName | undefined;
  error: ColorName | undefined;
  agent(a: Agent): ColorName | undefined;
  tier(t: TierName): ColorName | undefined;
  felt(f: Felt | null): ColorName | undefined;
  delta(d: number): ColorName | undefined;
  /** Whether dim/bold/inverse may be used (false with no colour, so frames stay plain text). */
  styled: boolean;
}

export function palette(level: 0 | 1 | 2 | 3): Palette {
  const on = level > 0;
  const c = (name: ColorName): ColorName | undefined => (on ? name : undefined);
  return {
    accent: c('cyan'),
    muted: c('gray'),
    ok: c('green'),
    warn: c('yellow'),
    error: c('red'),
    agent: (a) => c(AGENT_COLOR[a]),
    tier: (t) => c(TIER_COLOR[t]),
    felt: (f) => (f ? c(FELT_COLOR[f]) : undefined),
    delta: (d) => (d > 0 ? c('green') : d < 0 ? c('red') : undefined),
    styled: on,
  };
}

/** Symbols shared by the screens and the text views (single-column glyphs only). */
export const SYMBOL = {
  current: '▸',
  interrupt: '↯',
  silent: '∅',
  play: '▶',
  pause: '‖',
  dot: '·',
  arrow: '→',
} as const;
