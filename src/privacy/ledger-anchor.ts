/**
 * The one check every command that reads or spends privacy budget runs on the ledger before it
 * trusts it (`whisper`, `privacy ledger`, `privacy release`, `federate round`, `federate status`):
 * `checkLedger`. A ledger that fails it is exit 8 and nothing is released.
 *
 * Inside kourai.db: the rows are chained by SHA-256 (privacy-ledger.ts); each row's mechanism must
 * be the one its stored release document declared (the document is what left the forge), and every
 * release is made at q = 1.
 *
 * Outside kourai.db, records a rewrite of the ledger cannot take with it (anchors):
 *  - the memoir: every round's council_event records the ledger's head (how many releases, the hash
 *    of the last) and, per agent who spoke, her ε after the round. The ledger must still hold that
 *    row with that hash, a release for each agent who spoke, and give her at least that ε;
 *  - the council: it holds a receipt for every update this forge sent (its round status lists the
 *    agents this forge submitted; its trust history lists the rounds it was scored in) and the
 *    privacy policy every update of a round was checked against. The ledger must hold a release for
 *    each, at a σ and S that policy accepted.
 *
 * What this does not stop: someone who can write both kourai.db and the memoir can rewrite them to
 * agree (the hash chain has no secret). The memoir-only commands then believe the rewrite; only the
 * council's record, which no local write reaches, shows it (`federate status`, `federate round`).
 */
import { IntegrityError } from '../errors.js';
import { GENESIS_HASH, type ReleaseRow } from '../store/privacy-ledger.js';
import { ROUND_SAMPLE_RATE } from './budget.js';
import { RdpAccountant } from './rdp-accountant.js';

export interface LedgerHead {
  releases: number;
  hash: string;
}

export function ledgerHead(rows: readonly Pick<ReleaseRow, 'hash'>[]): LedgerHead {
  return { releases: rows.length, hash: rows[rows.length - 1]?.hash ?? GENESIS_HASH };
}

export interface Range {
  min: number;
  max: number;
}

export interface Anchors {
  /** The newest head the memoir recorded, and where (for the message). */
  memoir?: { head: LedgerHead; where: string } | null;
  /** Per agent who spoke in a recorded round: her cumulative ε after it, as the memoir recorded it. */
  spoke?: readonly { round: string; agent: string; epsilonAfter: number; where: string }[];
  /** Releases the council acknowledged: round key and agent (agent null: some agent of that round). */
  council?: readonly { round: string; agent: string | null; where: string }[];
  /** The privacy policy the council checked a round's updates against. */
  policies?: readonly { round: string; noiseMultiplier: Range; clipNorm: Range; where: string }[];
}

const HINT =
  'nothing was released. The ledger (kourai.db) was rolled back or replaced: restore the newest backup of $KOURAI_HOME/kourai.db; spent privacy budget cannot be refunded';

/** Throws IntegrityError (exit 8) when the ledger disagrees with what it released or with an anchor. */
export function checkLedger(
  rows: readonly ReleaseRow[],
  envelopes: ReadonlyMap<number, string>,
  anchors: Anchors,
): void {
  checkRecorded(rows, envelopes);
  checkAnchors(rows, anchors);
}

/** Each row against the document it released; every release at q = 1. */
export function checkRecorded(rows: readonly ReleaseRow[], envelopes: ReadonlyMap<number, string>): void {
  for (const r of rows) {
    if (r.sampleRate !== ROUND_SAMPLE_RATE)
      throw rewritten(
        `release ${r.id} (${r.agent}, round ${r.round}) records sample rate q = ${r.sampleRate}; every release is made at q = ${ROUND_SAMPLE_RATE}`,
      );
    const text = envelopes.get(r.id);
    if (text === undefined) continue; // spent, nothing drawn: nothing left the forge
    let doc: { round?: unknown; agent?: unknown; mechanism?: { clip_norm?: unknown; noise_multiplier?: unknown } };
    try {
      doc = JSON.parse(text) as typeof doc;
    } catch {
      throw new IntegrityError(
        `privacy ledger is corrupt: the stored release ${r.id} (${r.agent}, round ${r.round}) is unreadable`,
        HINT,
      );
    }
    const m = doc.mechanism;
    if (
      doc.round !== r.round ||
      doc.agent !== r.agent ||
      m?.noise_multiplier !== r.noiseMultiplier ||
      m.clip_norm !== r.clipNorm
    ) {
      throw rewritten(
        `release ${r.id} records ${r.agent}, round ${r.round}, σ = ${r.noiseMultiplier}, S = ${r.clipNorm}; the document it released declared ${String(doc.agent)}, round ${String(doc.round)}, σ = ${String(m?.noise_multiplier)}, S = ${String(m?.clip_norm)}`,
      );
    }
  }
}

/** Throws IntegrityError (exit 8) when the ledger does not contain what an anchor recorded. */
export function checkAnchors(rows: readonly ReleaseRow[], anchors: Anchors): void {
  const m = anchors.memoir;
  if (m && m.head.releases > 0) {
    const row = rows[m.head.releases - 1];
    if (!row) {
      throw new IntegrityError(
        `privacy ledger rolled back: ${m.where} records ${m.head.releases} releases, the ledger holds ${rows.length}`,
        HINT,
      );
    }
    if (row.hash !== m.head.hash) {
      throw new IntegrityError(
        `privacy ledger replaced: release ${m.head.releases} is not the one ${m.where} recorded (hash ${m.head.hash.slice(0, 12)}…, found ${row.hash.slice(0, 12)}…)`,
        HINT,
      );
    }
  }
  for (const s of anchors.spoke ?? []) {
    const row = rows.find((r) => r.round === s.round && r.agent === s.agent);
    if (!row)
      throw new IntegrityError(
        `privacy ledger rolled back: ${s.where} records that ${s.agent} spoke in round ${s.round}, but the ledger has no release for it`,
        HINT,
      );
    const eps = epsilonThrough(rows, row);
    // The same arithmetic on the same parameters: only a changed row gives less.
    if (eps < s.epsilonAfter * (1 - 1e-9) - 1e-12) {
      throw rewritten(
        `${s.where} records ${s.agent}'s ε after round ${s.round} as ${s.epsilonAfter.toFixed(4)}; the ledger's releases now give ${eps.toFixed(4)}`,
      );
    }
  }
  for (const c of anchors.council ?? []) {
    const found = rows.some((r) => r.round === c.round && (c.agent === null || r.agent === c.agent));
    if (!found) {
      throw new IntegrityError(
        `privacy ledger rolled back: ${c.where} holds ${c.agent ? `${c.agent}'s update` : 'an update'} for round ${c.round}, but the ledger has no release for it`,
        HINT,
      );
    }
  }
  for (const p of anchors.policies ?? []) {
    for (const r of rows) {
      if (r.round !== p.round) continue;
      if (!within(r.noiseMultiplier, p.noiseMultiplier) || !within(r.clipNorm, p.clipNorm)) {
        throw rewritten(
          `release ${r.id} (${r.agent}, round ${r.round}) records σ = ${r.noiseMultiplier}, S = ${r.clipNorm}; ${p.where} accepted only σ in [${p.noiseMultiplier.min}, ${p.noiseMultiplier.max}], S in [${p.clipNorm.min}, ${p.clipNorm.max}]`,
        );
      }
    }
  }
}

const within = (x: number, r: Range): boolean => x >= r.min * (1 - 1e-9) && x <= r.max * (1 + 1e-9);

/** The agent's cumulative ε after `row`, at the δ the row was recorded at, recomputed from the rows. */
function epsilonThrough(rows: readonly ReleaseRow[], row: ReleaseRow): number {
  const acc = new RdpAccountant();
  for (const r of rows) {
    if (r.id > row.id) break;
    if (r.agent === row.agent) acc.step(r.noiseMultiplier, r.sampleRate);
  }
  return acc.epsilon(row.delta).epsilon;
}

function rewritten(what: string): IntegrityError {
  return new IntegrityError(`privacy ledger rewritten: ${what}`, HINT);
}
