import { Chalk, type ChalkInstance } from 'chalk';

const cache = new Map<number, ChalkInstance>();

/** The one Chalk instance for a colour level (chalk alone does not honour NO_COLOR). */
export function colors(level: 0 | 1 | 2 | 3): ChalkInstance {
  let c = cache.get(level);
  if (!c) {
    c = new Chalk({ level });
    cache.set(level, c);
  }
  return c;
}
