import type { Ctx } from '../context.js';
import { EnvironmentError } from '../errors.js';

/**
 * Checks the terminal before an Ink screen starts (no Ink is loaded here): a screen that does
 * not fit is refused with the size it needs and what to do instead.
 */
export interface ScreenSize {
  columns: number;
  rows: number;
}

/** The smallest terminal each screen is drawn in (checked at start, and by the screen on resize). */
export const MIN_SIZE = {
  replay: { columns: 60, rows: 20 },
  feedback: { columns: 60, rows: 18 },
  whisper: { columns: 80, rows: 24 },
  consent: { columns: 70, rows: 24 },
  council: { columns: 40, rows: 12 },
} as const satisfies Record<string, ScreenSize>;

export function assertTerminalFits(
  ctx: Pick<Ctx, 'stdout'>,
  min: ScreenSize,
  screen: string,
  instead: string,
): ScreenSize {
  const columns = ctx.stdout.columns ?? 0;
  const rows = ctx.stdout.rows ?? 0;
  // A terminal that reports no size (0) is given the benefit of the doubt.
  if ((columns > 0 && columns < min.columns) || (rows > 0 && rows < min.rows)) {
    throw new EnvironmentError(
      `the terminal is ${columns}×${rows}; the ${screen} needs at least ${min.columns}×${min.rows}`,
      `enlarge the window, or ${instead}`,
    );
  }
  return { columns: columns || min.columns, rows: rows || min.rows };
}
