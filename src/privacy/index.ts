/**
 * Differential privacy of what leaves the forge:
 *   budget.ts           the Whisper Limit: budget spent and left, and the next round's plan
 *   clip.ts             a released delta clipped, all tensors together, to L2 norm S
 *   consent.ts          the Sovereignty Moment: which agents may speak for the forge
 *   council-policy.ts   the council's per-round policy (S, σ) as a forge applies it
 *   council-sigma.ts    the σ a council publishes for a target ε, affordable under the forges' floor
 *   gaussian-noise.ts   Gaussian noise from a cryptographically secure byte source
 *   ledger-anchor.ts    the check every budget reader runs on the ledger before trusting it
 *   log-math.ts         log-space arithmetic and erfc for the RDP accountant
 *   noise-key.ts        a keyed CSPRNG, so a release is the same noised bytes however often drawn
 *   privacy-config.ts   privacy settings (defaults < file < environment < flags)
 *   privacy-floor.ts    the most a council's policy may ask of this forge
 *   rdp-accountant.ts   the Rényi-DP accountant for the (sampled) Gaussian mechanism
 *   release.ts          what may leave the forge for one agent in one round
 *   round-gate.ts       the gate every council delta passes before it leaves
 *   whisper-report.ts   the Whisper Limit as data
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
