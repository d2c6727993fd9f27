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

export function assertTerminalFits(ctx: Pick<Ctx, 'stdout'>, min: ScreenSize, screen: string, instead: string): ScreenSize {
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
