import type { AppliedLean } from '../train/applied-lean.js';

/** The footer of `score` and `route`: the adapters the answer used, their weights, and why. */
export function appliedText(agent: string, a: AppliedLean): string {
  const w = (x: { version: number; weight: number }, kind: string): string =>
    `${kind} v${x.version}${x.weight !== 1 ? ` ×${x.weight}` : ''}`;
  const used = [a.bond ? w(a.bond, 'bond') : null, a.council ? w(a.council, 'council') : null]
    .filter(Boolean)
    .join(' + ');
  return `${agent}: base + ${used || 'no adapter'} · lean ${a.lean.toFixed(2)} (0 personal … 1 federated)\n  why: ${a.why}`;
}
