import { CouncilHttpError } from './http-error.js';
import type { CouncilStorage, ForgeRow } from './storage.js';
import { bearer, tokenForgeId, tokenMatches } from './tokens.js';

/** The forge an `Authorization: Bearer <token>` header belongs to, or 401. */
export async function authenticate(storage: CouncilStorage, authorization: string | undefined): Promise<ForgeRow> {
  const token = bearer(authorization);
  if (!token) throw new CouncilHttpError('unauthorized', 'missing bearer token: send Authorization: Bearer <token from `kourai council forge add`>');
  const id = tokenForgeId(token);
  const forge = id === null ? undefined : await storage.forgeById(id);
  if (!forge || !tokenMatches(token, forge.tokenHash)) throw new CouncilHttpError('unauthorized', 'unknown or revoked token');
  return forge;
}
