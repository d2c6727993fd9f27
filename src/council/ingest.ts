import { createHash } from 'node:crypto';
import { chunkRanges } from '../aggregation/strategy.js';
import { f32FromLE, toLE } from '../tensor/float-codec.js';
import { layoutOf, type Layout } from '../tensor/layout.js';
import type { Submission } from '../federation/protocol.js';
import { CouncilHttpError } from './http-error.js';

/**
 * Ingestion: everything about an update that can be checked without the database, checked before
 * anything is stored. Each refusal is one CouncilHttpError with a precise code.
 *
 * The norm check. A forge clips its update x to ‖x‖ ≤ S and adds noise S·σ·z, z ~ N(0, I_d), so
 * the released y = x + Sσz has ‖y‖ ≤ S + Sσ‖z‖. z ↦ ‖z‖ is 1-Lipschitz, so by Gaussian
 * concentration ‖z‖ ≤ E‖z‖ + t ≤ √d + t except with probability exp(−t²/2). The council
 * therefore refuses updates with
 *
 *     ‖y‖ > S · (1 + σ·(√d + t)) · (1 + 1e-6)
 *
 * (t = `tail_margin`, default 10: an honest update is refused with probability below 2·10⁻²²;
 * the last factor absorbs float32 rounding of an exactly clipped update). It does not prove the
 * forge added noise — only that it stayed within what its declared clip and noise allow.
 */
export function normBound(clipNorm: number, noiseMultiplier: number, d: number, tailMargin: number): number {
  return clipNorm * (1 + noiseMultiplier * (Math.sqrt(d) + tailMargin)) * (1 + 1e-6);
}

/** sha256 over the submission's content, independent of JSON key order and whitespace. */
export function digestOf(sub: Submission): string {
  const h = createHash('sha256');
  h.update(JSON.stringify([sub.base_fingerprint, sub.privacy.clip_norm, sub.privacy.noise_multiplier, sub.weight ?? null]));
  for (const t of [...sub.tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    h.update(`\n${JSON.stringify([t.name, t.shape, t.dtype])}\n`);
    h.update(t.data);
  }
  return h.digest('hex');
}

export interface Ingested {
  /** The agent's layout (the established one, or this update's if it is the first). */
  layout: Layout;
  /** All tensors flattened in layout order. */
  data: Float32Array;
  /** Storage chunks: float32 little-endian bytes of each chunkRanges(layout) range. */
  chunks: Buffer[];
  norm: number;
  normBound: number;
}

export function ingest(sub: Submission, opts: { agent: string; acceptedFingerprints: readonly string[]; layout: Layout | undefined; tailMargin: number }): Ingested {
  if (!opts.acceptedFingerprints.includes(sub.base_fingerprint)) {
    throw new CouncilHttpError('base_fingerprint_mismatch', `base model fingerprint ${JSON.stringify(sub.base_fingerprint)} is not one this council accepts`, { accepted: [...opts.acceptedFingerprints] });
  }
  const seen = new Set<string>();
  for (const t of sub.tensors) {
    if (seen.has(t.name)) throw new CouncilHttpError('tensor_names_mismatch', `tensor "${t.name}" appears twice`, { duplicate: t.name });
    seen.add(t.name);
  }
  const layout = opts.layout ?? layoutOf(sub.tensors.map((t) => ({ name: t.name, shape: t.shape })));
  const byName = new Map(sub.tensors.map((t) => [t.name, t]));
  const missing = layout.tensors.filter((t) => !byName.has(t.name)).map((t) => t.name);
  const expected = new Set(layout.tensors.map((t) => t.name));
  const unexpected = sub.tensors.filter((t) => !expected.has(t.name)).map((t) => t.name);
  if (missing.length || unexpected.length) {
    const parts = [missing.length ? `missing ${missing.slice(0, 5).map((n) => `"${n}"`).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}` : '', unexpected.length ? `unexpected ${unexpected.slice(0, 5).map((n) => `"${n}"`).join(', ')}${unexpected.length > 5 ? ` and ${unexpected.length - 5} more` : ''}` : ''].filter(Boolean);
    throw new CouncilHttpError('tensor_names_mismatch', `tensor names differ from ${opts.agent}'s adapter layout: ${parts.join('; ')}`, { missing, unexpected });
  }
  const data = new Float32Array(layout.size);
  let sumSq = 0;
  for (const spec of layout.tensors) {
    const t = byName.get(spec.name) as Submission['tensors'][number];
    if (t.shape.length !== spec.shape.length || t.shape.some((d, i) => d !== spec.shape[i])) {
      throw new CouncilHttpError('tensor_shape_mismatch', `tensor "${t.name}" has shape [${t.shape.join(', ')}], ${opts.agent}'s layout says [${spec.shape.join(', ')}]`, { tensor: t.name, shape: t.shape, expected: spec.shape });
    }
    const bytes = Buffer.from(t.data, 'base64');
    if (bytes.byteLength !== spec.size * 4) {
      throw new CouncilHttpError('tensor_data_length', `tensor "${t.name}" carries ${bytes.byteLength} bytes; shape [${spec.shape.join(', ')}] of float32 needs ${spec.size * 4}`, { tensor: t.name, bytes: bytes.byteLength, expected: spec.size * 4 });
    }
    const values = f32FromLE(bytes);
    for (let k = 0; k < values.length; k++) {
      const x = values[k] as number;
      if (x - x !== 0) {
        throw new CouncilHttpError('non_finite', `tensor "${t.name}" holds ${Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity'} at flat index ${k}`, { tensor: t.name, index: k });
      }
      sumSq += x * x;
    }
    data.set(values, spec.offset);
  }
  const norm = Math.sqrt(sumSq);
  const bound = normBound(sub.privacy.clip_norm, sub.privacy.noise_multiplier, layout.size, opts.tailMargin);
  if (norm > bound) {
    throw new CouncilHttpError(
      'norm_exceeds_clip',
      `update norm ${norm.toPrecision(6)} exceeds ${bound.toPrecision(6)}, the most clip_norm=${sub.privacy.clip_norm} with noise_multiplier=${sub.privacy.noise_multiplier} allows over ${layout.size} coordinates`,
      { norm, bound, clip_norm: sub.privacy.clip_norm, noise_multiplier: sub.privacy.noise_multiplier, coords: layout.size },
    );
  }
  const chunks = chunkRanges(layout).map(([s, e]) => toLE(data.subarray(s, e)));
  return { layout, data, chunks, norm, normBound: bound };
}
