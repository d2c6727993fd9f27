import { createCipheriv, createHash } from 'node:crypto';
import { GaussianSampler, type SecureBytes } from '../privacy/gaussian-noise.js';

/**
 * Privacy in the simulation: the real mechanism (src/privacy: clip the whole delta to S, add
 * N(0, σ²S²) per coordinate, σ as the council publishes it: privacy/council-sigma.ts), with one
 * deliberate difference — the noise bytes come from a seeded stream (AES-256-CTR keyed by the
 * cell, the forge, the round and the agent), so a cell is reproducible and `--http` can be
 * compared with the in-process run number for number. Nothing real is protected by a simulated forge's noise; a real forge draws
 * from node:crypto (src/privacy/gaussian-noise.ts, keyed per release by the federation round).
 */

/** A deterministic byte stream for a label (the same label, the same bytes). */
export function seededBytes(label: string): SecureBytes {
  const key = createHash('sha256').update(`kourai.simulation-noise/1\n${label}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return (n) => cipher.update(Buffer.alloc(n));
}

export function seededSampler(label: string): GaussianSampler {
  return new GaussianSampler(seededBytes(label));
}
