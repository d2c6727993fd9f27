/**
 * The norm check. A forge clips its update x to ‖x‖ ≤ S and adds noise S·σ·z, z ~ N(0, I_d), so
 * the released y = x + Sσz has ‖y‖ ≤ S + Sσ‖z‖. z ↦ ‖z‖ is 1-Lipschitz, so by Gaussian
 * concentration ‖z‖ ≤ E‖z‖ + t ≤ √d + t except with probability exp(−t²/2). The council
 * therefore refuses updates with
 *
 *     ‖y‖ > S · (1 + σ·(√d + t)) · (1 + 1e-6)
 *
 * (t = `tail_margin`, default 10: an honest update is refused with probability below 2·10⁻²²;
 * the last factor absorbs float32 rounding of an exactly clipped update). It does not prove the
 * forge added noise — only that it stayed within what the council's privacy policy allows: S
 * and σ must lie in the ranges the council publishes, so no forge can widen its own bound.
 *
 * Infinity when the bound is beyond the float64 range (the caller refuses: no such bound is a
 * bound at all); never a silent overflow to a number that would admit anything.
 */
export function normBound(clipNorm: number, noiseMultiplier: number, d: number, tailMargin: number): number {
  if (![clipNorm, noiseMultiplier, d, tailMargin].every((x) => Number.isFinite(x) && x >= 0)) return Infinity;
  const spread = noiseMultiplier * (Math.sqrt(d) + tailMargin);
  const bound = clipNorm * (1 + spread) * (1 + 1e-6);
  return Number.isFinite(bound) ? bound : Infinity;
}

/**
 * The largest server step (`server_lr`: the new global is the previous one plus that step times the
 * aggregate) a council may publish and a forge allows for when it checks what a round moved a
 * global by: the step multiplies that movement, so an unbounded one would admit any global.
 */
export const SERVER_LR_MAX = 4;
