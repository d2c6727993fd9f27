/**
 * Where a release's noise comes from: a keyed CSPRNG, so that one (council, round, agent) release
 * is the same noised bytes however often it is drawn.
 *
 * Why: the ledger already stores every noised document and resends it, but if the ledger were
 * rolled back (rows deleted, an old kourai.db restored) a fresh draw for the same round would put
 * a second, differently-noised copy of the same delta into the world, and averaging the two
 * halves the noise. With keyed noise, drawing again for the same round and the same delta gives
 * the identical bytes, so a rollback cannot buy a second look.
 *
 * The stream: AES-256-CTR (node:crypto) with a zero IV, keyed by
 *     HMAC-SHA256(forge secret, ["kourai.noise/1", round key, agent, S, σ, sha256(delta)])
 * The forge secret is 32 random bytes from node:crypto in `$KOURAI_HOME/secrets/noise.key`
 * (0600, directory 0700), created on the first release.
 *
 * The delta's digest is part of the derivation on purpose: the same noise on two DIFFERENT deltas
 * would reveal their difference exactly (y1 − y2 = x1 − x2). A different delta for a round that
 * already spoke is refused by the ledger (and, after a rollback, by its anchors: the memoir's
 * council_event entries and the council's receipts — see src/privacy/ledger-anchor.ts).
 */
import { createCipheriv, createHash, createHmac } from 'node:crypto';
import { join } from 'node:path';
import { IntegrityError } from '../errors.js';
import { readPrivateFile, writePrivateFile } from '../runtime/private-file.js';
import { toLE } from '../tensor/float-codec.js';
import type { NamedTensor } from '../tensor/tensor.js';
import type { SecureBytes } from './gaussian-noise.js';

export const NOISE_KEY_BYTES = 32;

export function noiseKeyPath(home: string): string {
  return join(home, 'secrets', 'noise.key');
}

/** What one release's noise stream is derived from (besides the forge secret). */
export interface NoiseInfo {
  /** The round key the ledger records (src/federation/round/round-key.ts for council rounds). */
  round: string;
  agent: string;
  clipNorm: number;
  noiseMultiplier: number;
  /** deltaDigest(delta) of the un-noised delta. */
  deltaDigest: string;
}

/** A release's noise bytes for `info` (called after the ledger row is committed). */
export type NoiseStreams = (info: NoiseInfo) => SecureBytes;

/** sha256 over the delta's names, shapes and float32 little-endian values, in order. */
export function deltaDigest(delta: readonly NamedTensor[]): string {
  const h = createHash('sha256');
  for (const t of delta) {
    h.update(`${JSON.stringify([t.name, t.shape])}\n`);
    h.update(toLE(t.data));
  }
  return h.digest('hex');
}

/** The keyed stream for one release: deterministic in (key, info), indistinguishable from random without the key. */
export function keyedNoise(key: Buffer, info: NoiseInfo): SecureBytes {
  if (key.length !== NOISE_KEY_BYTES) throw new RangeError(`the noise key must be ${NOISE_KEY_BYTES} bytes`);
  const seed = createHmac('sha256', key)
    .update(
      JSON.stringify(['kourai.noise/1', info.round, info.agent, info.clipNorm, info.noiseMultiplier, info.deltaDigest]),
    )
    .digest();
  const cipher = createCipheriv('aes-256-ctr', seed, Buffer.alloc(16));
  return (n) => cipher.update(Buffer.alloc(n));
}

function parseKey(text: Buffer, path: string): Buffer {
  const s = text.toString('utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(s)) {
    throw new IntegrityError(
      `the noise key ${path} is damaged (expected 64 hex digits): nothing was released`,
      'restore it from the backup of $KOURAI_HOME/secrets; a new key would noise re-drawn rounds differently',
    );
  }
  return Buffer.from(s, 'hex');
}

/** The forge's noise key, created (0600) from `random` on first use. Safe against a concurrent first use. */
export function loadNoiseKey(home: string, random: SecureBytes): Buffer {
  const path = noiseKeyPath(home);
  const existing = readPrivateFile(path, 'the noise key');
  if (existing) return parseKey(existing, path);
  const fresh = random(NOISE_KEY_BYTES);
  if (fresh.length < NOISE_KEY_BYTES) throw new Error('secure random source returned too few bytes');
  try {
    writePrivateFile(path, `${fresh.subarray(0, NOISE_KEY_BYTES).toString('hex')}\n`, 'the noise key', {
      overwrite: false,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // another process made it first: use theirs
  }
  return parseKey(readPrivateFile(path, 'the noise key') as Buffer, path);
}

/** Noise streams keyed by the forge's secret; the key file is read (or created) on the first draw only. */
export function forgeNoise(home: string, random: SecureBytes): NoiseStreams {
  let key: Buffer | undefined;
  return (info) => {
    key ??= loadNoiseKey(home, random);
    return keyedNoise(key, info);
  };
}
