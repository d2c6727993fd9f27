import { createCipheriv, createHash } from 'node:crypto';
import { GaussianSampler, type SecureBytes } from '../privacy/gaussian-noise.js';
import { sigmaForEpsilon } from '../privacy/rdp-accountant.js';

/**
 * Privacy in the simulation: the real mechanism (src/privacy: clip the whole delta to S, add
 * N(0, σ²S²) per coordinate, σ from the RDP accountant), with one deliberate difference — the
 * noise bytes come from a seeded stream (AES-256-CTR keyed by the cell, the forge, the round and
 * the agent), so a cell is reproducible and `--http` can be compared with the in-process run
 * number for number. Nothing real is protected by a simulated forge's noise; a real forge draws
 * from node:crypto (src/privacy/gaussian-noise.ts, keyed per release by the federation round).
 */

/**
 * σ such that R rounds cost at most ε at δ toward an observer of the released council models; 0
 * for ε = ∞ (clip only). Each round samples every forge independently with probability q (a
 * Poisson cohort), so the sampled-Gaussian accountant amplifies; q = 1: everyone, every round.
 */
export function sigmaFor(epsilon: number, rounds: number, delta: number, q = 1): number {
  if (epsilon === Infinity) return 0;
  return sigmaForEpsilon({ epsilon, delta, steps: rounds, sampleRate: q, tolerance: 1e-6 }).noiseMultiplier;
}

/** A deterministic byte stream for a label (the same label, the same bytes). */
export function seededBytes(label: string): SecureBytes {
  const key = createHash('sha256').update(`kourai.simulation-noise/1\n${label}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return (n) => cipher.update(Buffer.alloc(n));
}

export function seededSampler(label: string): GaussianSampler {
  return new GaussianSampler(seededBytes(label));
}
