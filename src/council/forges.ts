import { UsageError } from '../errors.js';
import type { CouncilStorage, ForgeRow } from './storage.js';
import { hashToken, newToken } from './tokens.js';

export const FORGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Registers a forge and returns its token — the only time the token exists in clear: the
 * council keeps its sha256 (see tokens.ts).
 */
export async function addForge(storage: CouncilStorage, name: string, random: (n: number) => Buffer, now: Date): Promise<{ forge: ForgeRow; token: string }> {
  if (!FORGE_NAME.test(name)) throw new UsageError(`forge name "${name}" must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  const secret = random(32);
  let token = '';
  const forge = await storage.addForge(name, now.toISOString(), (id) => {
    token = newToken(id, secret);
    return hashToken(token);
  });
  return { forge, token };
}
