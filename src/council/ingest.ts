import { createHash } from 'node:crypto';
import type { Layout } from '../tensor/layout.js';
import type { Range } from './config.js';
import { normBound } from './norm-bound.js';
import { formatRange, type PrivacyPolicy } from './round-settings.js';
import { COUNCIL_URL_HEADER, type Submission } from '../protocol/wire.js';
import { councilKeyOf, parseRoundKey } from '../protocol/round-key.js';
import { CouncilHttpError } from './http-error.js';

/**
 * Ingestion: everything about an update that can be checked without the database, checked before
 * it is kept. Each refusal is one CouncilHttpError with a precise code. The layout is the
 * council's configured one for the agent; the privacy policy is the round's (see norm-bound.ts).
 * The checks of tensor bytes run as the bytes arrive (upload.ts); these are the rest.
 */
/** sha256 over the submission's content, independent of JSON key order and whitespace. */
export function digestOf(sub: Submission): string {
  const h = createHash('sha256');
  h.update(
    digestMetaLine(sub.base_fingerprint, sub.privacy.clip_norm, sub.privacy.noise_multiplier, sub.weight ?? null),
  );
  for (const t of inNameOrder(sub.tensors)) {
    h.update(`\n${digestHeadLine(t)}\n`);
    h.update(t.data);
  }
  return h.digest('hex');
}

/** The digest's first line: the base fingerprint, S, σ and weight the update declares. */
export function digestMetaLine(
  fingerprint: unknown,
  clipNorm: unknown,
  noiseMultiplier: unknown,
  weight: unknown,
): string {
  return JSON.stringify([fingerprint, clipNorm, noiseMultiplier, weight]);
}

/** A tensor's line in the digest (hashed between newlines, before its bytes). */
export function digestHeadLine(t: { name: unknown; shape: unknown; dtype: unknown }): string {
  return JSON.stringify([t.name, t.shape, t.dtype]);
}

/** Tensors in the digest's order: by name. */
export function inNameOrder<T extends { name: string }>(tensors: readonly T[]): T[] {
  return [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

interface IngestOptions {
  agent: string;
  acceptedFingerprints: readonly string[];
  layout: Layout;
  policy: PrivacyPolicy;
}

/**
 * The checks of an update that need no tensor byte: fingerprint, privacy policy, tensor names and
 * shapes against the layout. A body read as it arrives passes its tensors with `data` "".
 */
export function checkUpdateHead(sub: Submission, opts: IngestOptions): void {
  if (!opts.acceptedFingerprints.includes(sub.base_fingerprint)) {
    throw new CouncilHttpError(
      'base_fingerprint_mismatch',
      `base model fingerprint ${JSON.stringify(sub.base_fingerprint)} is not one this council accepts`,
      { accepted: [...opts.acceptedFingerprints] },
    );
  }
  const { clip_norm: S, noise_multiplier: sigma } = sub.privacy;
  const { policy, layout } = opts;
  const outside = (what: string, v: number, r: Range, openAtZero: boolean): CouncilHttpError =>
    new CouncilHttpError(
      'privacy_policy_violation',
      `${what} ${v} is outside the council's policy ${formatRange(r, openAtZero)} (see the round status, privacy_policy)`,
      { [what]: v, policy },
    );
  if (!(S >= policy.clip_norm.min && S <= policy.clip_norm.max)) throw outside('clip_norm', S, policy.clip_norm, true);
  if (!(sigma >= policy.noise_multiplier.min && sigma <= policy.noise_multiplier.max))
    throw outside('noise_multiplier', sigma, policy.noise_multiplier, false);
  const seen = new Set<string>();
  for (const t of sub.tensors) {
    if (seen.has(t.name))
      throw new CouncilHttpError('tensor_names_mismatch', `tensor "${t.name}" appears twice`, { duplicate: t.name });
    seen.add(t.name);
  }
  const byName = new Map(sub.tensors.map((t) => [t.name, t]));
  const missing = layout.tensors.filter((t) => !byName.has(t.name)).map((t) => t.name);
  const expected = new Set(layout.tensors.map((t) => t.name));
  const unexpected = sub.tensors.filter((t) => !expected.has(t.name)).map((t) => t.name);
  if (missing.length || unexpected.length) {
    const list = (xs: string[]): string =>
      `${xs
        .slice(0, 5)
        .map((n) => `"${n}"`)
        .join(', ')}${xs.length > 5 ? ` and ${xs.length - 5} more` : ''}`;
    const parts = [
      missing.length ? `missing ${list(missing)}` : '',
      unexpected.length ? `unexpected ${list(unexpected)}` : '',
    ].filter(Boolean);
    throw new CouncilHttpError(
      'tensor_names_mismatch',
      `tensor names differ from ${opts.agent}'s adapter layout: ${parts.join('; ')}`,
      { missing, unexpected },
    );
  }
  // Shapes against the configured layout first: a declared shape never sizes an allocation.
  for (const spec of layout.tensors) {
    const t = byName.get(spec.name) as Submission['tensors'][number];
    if (t.shape.length !== spec.shape.length || t.shape.some((d, i) => d !== spec.shape[i])) {
      throw new CouncilHttpError(
        'tensor_shape_mismatch',
        `tensor "${t.name}" has shape [${t.shape.join(', ')}], ${opts.agent}'s layout says [${spec.shape.join(', ')}]`,
        { tensor: t.name, shape: t.shape, expected: spec.shape },
      );
    }
  }
}

/** The norm against the bound clip_norm and noise_multiplier allow over the layout's coordinates; returns the bound. */
export function checkNorm(norm: number, sub: Submission, layout: Layout, policy: PrivacyPolicy): number {
  const { clip_norm: S, noise_multiplier: sigma } = sub.privacy;
  const bound = normBound(S, sigma, layout.size, policy.tail_margin);
  if (!Number.isFinite(bound))
    throw new CouncilHttpError(
      'privacy_policy_violation',
      `clip_norm=${S} with noise_multiplier=${sigma} over ${layout.size} coordinates gives no finite norm bound`,
      { policy },
    );
  if (norm > bound) {
    throw new CouncilHttpError(
      'norm_exceeds_clip',
      `update norm ${norm.toPrecision(6)} exceeds ${bound.toPrecision(6)}, the most clip_norm=${S} with noise_multiplier=${sigma} allows over ${layout.size} coordinates`,
      { norm, bound, clip_norm: S, noise_multiplier: sigma, coords: layout.size },
    );
  }
  return bound;
}

/**
 * A release is bound to its round and its forge: its round key (`<council key>#<round>`) must name
 * the round of the URL it was sent to, and the council key must be the sending forge's own — the
 * digest of the URL the forge joined (Kourai-Council-Url), its name and its registration here.
 * `councilUrl` undefined: no HTTP request (an in-process council), only the round is checked.
 */
export function checkReleaseBinding(
  roundKey: string | undefined,
  p: { round: number; forge: { name: string; createdAt: string }; councilUrl?: string | null },
): void {
  if (roundKey === undefined) return;
  const k = parseRoundKey(roundKey);
  if (!k)
    throw new CouncilHttpError(
      'round_mismatch',
      `the release's round ${JSON.stringify(roundKey.slice(0, 64))} is not a council round key (<council key>#<round>)`,
      { round_key: roundKey.slice(0, 64) },
    );
  if (k.round !== p.round)
    throw new CouncilHttpError(
      'round_mismatch',
      `the release is for round ${k.round} but was sent to round ${p.round}`,
      { release_round: k.round, round: p.round },
    );
  if (p.councilUrl === undefined) return;
  if (p.councilUrl === null || p.councilUrl.length > 2048) {
    throw new CouncilHttpError(
      'foreign_round_key',
      `a release must say the council URL the forge joined (the ${COUNCIL_URL_HEADER} header): its round key cannot be checked without it`,
    );
  }
  const own = councilKeyOf({ url: p.councilUrl, forge: p.forge.name, registeredAt: p.forge.createdAt });
  if (k.councilKey !== own) {
    throw new CouncilHttpError(
      'foreign_round_key',
      `the release's round key ${k.councilKey}#${k.round} is not forge "${p.forge.name}"'s own (${own}#${p.round} for ${p.councilUrl}): a release is sent by the forge that drew it, to the round it was drawn for`,
      { round_key: roundKey, expected: `${own}#${p.round}` },
    );
  }
}
