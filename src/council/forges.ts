import { NotFoundError, UsageError } from '../errors.js';
import type { CouncilStorage, ForgeRow } from './storage.js';
import { hashToken, newToken } from './tokens.js';

export const FORGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Forges as the operator manages them. A token exists in clear only when it is issued (add,
 * rotate): the council keeps its sha256 (see tokens.ts).
 */
export async function addForge(
  storage: CouncilStorage,
  name: string,
  random: (n: number) => Buffer,
  now: Date,
): Promise<{ forge: ForgeRow; token: string }> {
  if (!FORGE_NAME.test(name))
    throw new UsageError(
      `forge name "${name}" must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  const secret = random(32);
  let token = '';
  const forge = await storage.addForge(name, now.toISOString(), (id) => {
    token = newToken(id, secret);
    return hashToken(token);
  });
  return { forge, token };
}

export async function forgeNamed(storage: CouncilStorage, name: string): Promise<ForgeRow> {
  const f = await storage.forgeByName(name);
  if (!f) throw new NotFoundError(`no forge named "${name}"`, 'kourai council forge list');
  return f;
}

/** A new token for the forge; the old one stops working at once, and a revocation is lifted. */
export async function rotateForgeToken(
  storage: CouncilStorage,
  name: string,
  random: (n: number) => Buffer,
  now: Date,
): Promise<{ forge: ForgeRow; token: string }> {
  const f = await forgeNamed(storage, name);
  const token = newToken(f.id, random(32));
  await storage.setForgeToken(f.id, hashToken(token), now.toISOString());
  return { forge: (await storage.forgeById(f.id)) ?? f, token };
}

/** Stops accepting the forge's token (403 forge_revoked); what it already sent stays. Idempotent. */
export async function revokeForge(storage: CouncilStorage, name: string, now: Date): Promise<ForgeRow> {
  const f = await forgeNamed(storage, name);
  await storage.revokeForge(f.id, now.toISOString());
  return (await storage.forgeById(f.id)) ?? f;
}
