/**
 * Anchors of the privacy ledger: records kept OUTSIDE kourai.db that a rollback of the ledger
 * cannot take with it. Deleting the newest ledger rows (or restoring an old kourai.db) would
 * refund spent budget; these checks notice it before anything more is released:
 *
 *  - the memoir: every round's council_event records the ledger's head (how many releases, the
 *    hash of the last); the ledger must still hold that row with that hash;
 *  - the council: it holds a receipt for every update this forge sent (its round status lists
 *    the agents this forge submitted; its trust history lists the rounds it was scored in); the
 *    ledger must hold a release for each.
 *
 * An anchor the ledger does not match is exit 8 and nothing is released.
 */
import { IntegrityError } from '../errors.js';
import { GENESIS_HASH, type ReleaseRow } from '../store/privacy-ledger.js';

export interface LedgerHead {
  releases: number;
  hash: string;
}

export function ledgerHead(rows: readonly Pick<ReleaseRow, 'hash'>[]): LedgerHead {
  return { releases: rows.length, hash: rows[rows.length - 1]?.hash ?? GENESIS_HASH };
}

export interface Anchors {
  /** The newest head the memoir recorded, and where (for the message). */
  memoir?: { head: LedgerHead; where: string } | null;
  /** Releases the council acknowledged: round key and agent (agent null: some agent of that round). */
  council?: readonly { round: string; agent: string | null; where: string }[];
}

const HINT = 'nothing was released. The ledger (kourai.db) was rolled back or replaced: restore the newest backup of $KOURAI_HOME/kourai.db; spent privacy budget cannot be refunded';

/** Throws IntegrityError (exit 8) when the ledger does not contain what an anchor recorded. */
export function checkAnchors(rows: readonly ReleaseRow[], anchors: Anchors): void {
  const m = anchors.memoir;
  if (m && m.head.releases > 0) {
    const row = rows[m.head.releases - 1];
    if (!row) {
      throw new IntegrityError(`privacy ledger rolled back: ${m.where} records ${m.head.releases} releases, the ledger holds ${rows.length}`, HINT);
    }
    if (row.hash !== m.head.hash) {
      throw new IntegrityError(`privacy ledger replaced: release ${m.head.releases} is not the one ${m.where} recorded (hash ${m.head.hash.slice(0, 12)}…, found ${row.hash.slice(0, 12)}…)`, HINT);
    }
  }
  for (const c of anchors.council ?? []) {
    const found = rows.some((r) => r.round === c.round && (c.agent === null || r.agent === c.agent));
    if (!found) {
      throw new IntegrityError(`privacy ledger rolled back: ${c.where} holds ${c.agent ? `${c.agent}'s update` : 'an update'} for round ${c.round}, but the ledger has no release for it`, HINT);
    }
  }
}
