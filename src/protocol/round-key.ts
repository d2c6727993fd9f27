import { createHash } from 'node:crypto';

/**
 * One round key, shared by the privacy ledger (its `round` column), the noise derivation and the
 * release document the council receives: `<council key>#<round number>`.
 *
 * The council key names one council as this forge knows it: a digest of the council's URL, the
 * forge's name there and when the forge was registered (GET /v1/me). Round numbers restart at 1 on
 * a new council, so round 3 of one council and round 3 of another never share a ledger row; a
 * rotated token keeps the registration, and so the key. The council recomputes it from the URL the
 * forge says it joined (Kourai-Council-Url) and its own record of the forge: a release whose round
 * key names another forge, or another round, is refused.
 */
export function councilKeyOf(p: { url: string; forge: string; registeredAt: string }): string {
  const h = createHash('sha256')
    .update(JSON.stringify(['kourai.council/1', normalizeUrl(p.url), p.forge, p.registeredAt]))
    .digest('hex');
  return `c${h.slice(0, 15)}`;
}

export function roundKey(councilKey: string, round: number): string {
  if (!Number.isSafeInteger(round) || round < 1)
    throw new RangeError(`a council round is a whole number ≥ 1, got ${round}`);
  return `${councilKey}#${round}`;
}

/** The council round a key names, or null when the key is not a council round key (e.g. a hand-made `privacy release --round`). */
export function parseRoundKey(key: string): { councilKey: string; round: number } | null {
  const m = /^(c[0-9a-f]{15})#(\d{1,12})$/.exec(key);
  return m ? { councilKey: m[1] as string, round: Number(m[2]) } : null;
}

/** The URL as the forge stores it: no trailing slashes. */
export function normalizeUrl(url: string): string {
  return url.replace(/\/+$/, '');
}
