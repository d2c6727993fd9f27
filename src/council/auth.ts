import { CouncilHttpError } from './http-error.js';
import type { CouncilStorage, ForgeRow } from './storage.js';
import { bearer, hashToken } from './tokens.js';

/**
 * The forge an `Authorization: Bearer <token>` header belongs to, or 401/403.
 *
 * The token is looked up by the sha256 of the whole token, never by the forge id it carries: every
 * presented token costs one hash and one indexed lookup whether or not its id exists, so ids
 * (sequential) cannot be probed by timing. Comparing hashes in a B-tree is not constant-time, and
 * need not be: what an attacker learns is how many leading bytes of sha256(guess) match a stored
 * hash, which says nothing about any token (a preimage would still be needed).
 */
export async function authenticate(storage: CouncilStorage, authorization: string | undefined): Promise<ForgeRow> {
  const token = bearer(authorization);
  if (!token)
    throw new CouncilHttpError(
      'unauthorized',
      'missing bearer token: send Authorization: Bearer <token from `kourai council forge add`>',
    );
  const forge = await storage.forgeByTokenHash(hashToken(token));
  if (!forge) throw new CouncilHttpError('unauthorized', 'unknown or revoked token');
  if (forge.revokedAt)
    throw new CouncilHttpError(
      'forge_revoked',
      `the token of forge "${forge.name}" was revoked at ${forge.revokedAt}; ask the council operator for a new one (kourai council forge rotate)`,
    );
  return forge;
}
