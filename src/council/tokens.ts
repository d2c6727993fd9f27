import { createHash } from 'node:crypto';

/**
 * Per-forge bearer tokens: `kourai_<forge id>_<43 chars of base64url>` (256 random bits from
 * node:crypto; the id only helps operators tell tokens apart). The council stores only
 * sha256(token) — for a secret of 256 random bits a fast hash is the right tool (a slow password
 * hash would only slow every request) — and finds a forge by that hash (see auth.ts).
 */
export function newToken(forgeId: number, random: Buffer): string {
  if (random.length < 32) throw new RangeError('a token needs 32 random bytes');
  return `kourai_${forgeId}_${random.subarray(0, 32).toString('base64url')}`;
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The token from an `Authorization: Bearer …` header. */
export function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? (m[1] as string) : null;
}
