import { synthSessions } from '../../src/memoir/sample/synth.js';

/**
 * Lines of whole synthetic sessions (`synthSessions`, 12 turns each), at least `atLeast` of them:
 * the memoir the index, verify and replay tests build (14k lines is over the 8 MiB of a bulk load).
 */
export function synthLines(seed: number, atLeast: number): string[] {
  const lines: string[] = [];
  for (const s of synthSessions({ seed, sessions: 1e9, turns: 12 })) {
    lines.push(...s.lines);
    if (lines.length >= atLeast) break;
  }
  return lines;
}
