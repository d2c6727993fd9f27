import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Per-forge bearer tokens: `kourai_<forge id>_<43 chars of base64url>` (256 random bits from
 * node:crypto). The council stores only sha256(token) — for a secret of 256 random bits a fast
 * hash is the right tool (a slow password hash would only slow every request); the forge id
 * prefix finds the row, and the hashes are compared with timingSafeEqual.
 */
export function newToken(forgeId: number, random: Buffer): string {
  if (random.length < 32) throw new RangeError('a token needs 32 random bytes');
  return `kourai_${forgeId}_${random.subarray(0, 32).toString('base64url')}`;
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The forge id a token claims, or null if it is not shaped like one of ours. */
export function tokenForgeId(token: string): number | null {
  const m = /^kourai_(\d{1,12})_[A-Za-z0-9_-]{43}$/.exec(token);
  return m ? Number(m[1]) : null;
}

/** Constant-time comparison of a presented token with a stored hash. */
export function tokenMatches(token: string, storedHash: Buffer): boolean {
  const h = hashToken(token);
  return h.length === storedHash.length && timingSafeEqual(h, storedHash);
}

/** The token from an `Authorization: Bearer …` header. */
export function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? (m[1] as string) : null;
}
