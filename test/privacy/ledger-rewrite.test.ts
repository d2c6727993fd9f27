import { readFileSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LedgerResult } from '../../src/commands/privacy/ledger.js';
import type { WhisperReport } from '../../src/privacy/whisper-report.js';
import { ExitCode, type KouraiError } from '../../src/errors.js';
import { defaultEventsMemoir, memoirEventsWriter } from '../../src/federation/round/events-memoir.js';
import { councilAnchors } from '../../src/federation/round/ledger-anchors.js';
import { checkLedger, ledgerHead } from '../../src/privacy/ledger-anchor.js';
import { RdpAccountant } from '../../src/privacy/rdp-accountant.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { PrivacyLedger, releaseHash, type ReleaseRow } from '../../src/store/privacy-ledger.js';
import { openStateDb, statePath } from '../../src/store/state-db.js';
import type { RoundStatus } from '../../src/protocol/wire.js';
import { details } from '../federation/council-event-fixture.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';
import { runCli } from '../helpers/run.js';

/**
 * A local attacker rewrites the privacy ledger (kourai.db) and patches the memoir's ledger anchor to
 * match, or deletes every row: every command that reads or spends budget (`whisper`, `privacy
 * ledger`, `privacy release`; `federate round`/`status` through the same check) refuses, exit 8,
 * instead of reporting the budget as unspent. What local records cannot catch (the memoir rewritten
 * to agree), the council's record of each round's policy does.
 */
const whisperCmd = () => import('../../src/commands/whisper.js');
const ledgerCmd = () => import('../../src/commands/privacy/ledger.js');
const releaseCmd = () => import('../../src/commands/privacy/release.js');
const consentCmd = () => import('../../src/commands/federate/consent.js');

const COUNCIL = 'c0123456789abcde';
const AGENTS = ['metis', 'techne'] as const;
const DELTA = [{ name: 'w', shape: [2], data: Float32Array.of(0.3, 0.4) }];

let ctx: TestCtx;
let memoir: string;
beforeEach(async () => {
  ctx = testCtx();
  await runCli(consentCmd, { allow: [...AGENTS] }, ctx);
  memoir = defaultEventsMemoir(ctx.home);
  const events = memoirEventsWriter(memoir, ctx.now);
  // Three council rounds at the default σ, each recorded in the memoir as a round records it.
  for (let round = 1; round <= 3; round++) {
    const gate = PrivacyGate.open({
      home: ctx.home,
      config: DEFAULT_PRIVACY_CONFIG,
      random: ctx.secureRandom,
      now: ctx.now,
    });
    const key = `${COUNCIL}#${round}`;
    const spoke = AGENTS.map((agent) => {
      const out = gate.recordRelease({ round: key, agent, delta: DELTA, baseFingerprint: 'sha256:base' });
      return {
        agent,
        epsilon_cost: 0.1,
        epsilon_after: out.epsilonAgent,
        receipt_digest: `sha256:${agent}${round}`,
        used: true,
        resumed: false,
      };
    });
    events.append(
      details({
        round,
        round_key: key,
        spoke,
        came_back: [],
        learned: [],
        ledger_head: ledgerHead(gate.ledger.releases()),
      }),
    );
    gate.close();
  }
});
afterEach(() => ctx.cleanup());

async function failure(p: Promise<unknown>): Promise<KouraiError> {
  try {
    await p;
  } catch (err) {
    return err as KouraiError;
  }
  throw new Error('expected the command to fail');
}

const spent = async (): Promise<number> =>
  ((await runCli(ledgerCmd, { json: true }, ctx)).json as LedgerResult).spent.forge;

/** The attacker: every row at σ = 1e6, ε and the hash chain recomputed, the memoir's head patched in place. */
function rewriteLedger(opts: { payloads: boolean; memoirEpsilons: boolean }): void {
  const db = new Database(statePath(ctx.home));
  for (const t of ['releases', 'release_payloads'])
    for (const op of ['update', 'delete']) db.exec(`DROP TRIGGER IF EXISTS ${t}_no_${op}`);
  const rows = new PrivacyLedger(db).releases();
  const oldHead = ledgerHead(rows).hash;
  const forge = new RdpAccountant();
  const agents = new Map<string, RdpAccountant>();
  let prev = rows[0]?.prevHash as string;
  const eps = new Map<string, number>();
  for (const r of rows) {
    const sigma = 1e6;
    forge.step(sigma, 1);
    const a = agents.get(r.agent) ?? new RdpAccountant();
    agents.set(r.agent, a.step(sigma, 1));
    const base = {
      ...r,
      noiseMultiplier: sigma,
      epsilonAgent: a.epsilon(r.delta).epsilon,
      epsilonForge: forge.epsilon(r.delta).epsilon,
    };
    const hash = releaseHash(prev, base);
    db.prepare(
      'UPDATE releases SET noise_multiplier = ?, epsilon_agent = ?, epsilon_forge = ?, prev_hash = ?, hash = ? WHERE id = ?',
    ).run(sigma, base.epsilonAgent, base.epsilonForge, prev, hash, r.id);
    if (opts.payloads)
      db.prepare(
        `UPDATE release_payloads SET payload = replace(payload, '"noise_multiplier":8', '"noise_multiplier":1000000') WHERE release_id = ?`,
      ).run(r.id);
    eps.set(`${r.agent}@${r.round}`, base.epsilonAgent);
    prev = hash;
  }
  db.close();
  let text = readFileSync(memoir, 'utf8').replace(oldHead, prev);
  if (opts.memoirEpsilons) {
    // a same-meaning rewrite of every recorded ε (the line lengths change: the attacker does not care)
    text = text.replace(
      /"agent":"(\w+)","epsilon_cost":([\d.e-]+),"epsilon_after":([\d.e-]+)/g,
      (_m, agent: string, cost: string) => {
        const round = /"round_key":"([^"]+)"/.exec(text.slice(text.indexOf(_m) - 2000, text.indexOf(_m)))?.[1];
        return `"agent":"${agent}","epsilon_cost":${cost},"epsilon_after":${eps.get(`${agent}@${round}`) ?? 0}`;
      },
    );
  }
  writeFileSync(memoir, text);
}

function deleteAllRows(): void {
  const db = new Database(statePath(ctx.home));
  for (const t of ['releases', 'release_payloads', 'release_events'])
    for (const op of ['update', 'delete']) db.exec(`DROP TRIGGER IF EXISTS ${t}_no_${op}`);
  db.exec('DELETE FROM release_events; DELETE FROM release_payloads; DELETE FROM releases;');
  db.close();
}

async function everyBudgetReaderRefuses(problem: RegExp): Promise<void> {
  for (const [name, run] of [
    ['whisper', () => runCli(whisperCmd, { json: true }, ctx)],
    ['privacy ledger', () => runCli(ledgerCmd, { json: true }, ctx)],
    [
      'privacy release',
      () =>
        runCli(
          releaseCmd,
          { agent: 'metis', round: `${COUNCIL}#4`, file: deltaFile(), baseFingerprint: 'sha256:base', json: true },
          ctx,
        ),
    ],
  ] as const) {
    const err = await failure(run());
    expect(err.exitCode, `${name}: ${err.message}`).toBe(ExitCode.integrity);
    expect(err.message, name).toMatch(problem);
  }
  // nothing was released by the refused `privacy release`
  const db = openStateDb(ctx.home);
  expect(new PrivacyLedger(db).find('metis', `${COUNCIL}#4`)).toBeUndefined();
  db.close();
}

function deltaFile(): string {
  const file = `${ctx.home}/delta.json`;
  writeFileSync(file, JSON.stringify({ tensors: [{ name: 'w', shape: [2], data: [0.3, 0.4] }] }));
  return file;
}

describe('a rewritten or emptied privacy ledger', () => {
  it('untouched: every budget reader works and shows what was spent', async () => {
    const w = (await runCli(whisperCmd, { json: true }, ctx)).json as WhisperReport;
    expect(w).toBeDefined();
    expect(await spent()).toBeGreaterThan(1);
  });

  it('every row at σ = 1e6, the chain recomputed and the memoir head patched: refused (the documents it released disagree)', async () => {
    rewriteLedger({ payloads: false, memoirEpsilons: false });
    await everyBudgetReaderRefuses(
      /privacy ledger rewritten: release 1 records metis, round c0123456789abcde#1, σ = 1000000, S = 1; the document it released declared metis, round c0123456789abcde#1, σ = 8, S = 1/,
    );
  });

  it('… and the stored documents rewritten too: refused (the memoir recorded each agent’s ε)', async () => {
    rewriteLedger({ payloads: true, memoirEpsilons: false });
    await everyBudgetReaderRefuses(
      /privacy ledger rewritten: the memoir's council_event of round 1 \(.*\) records metis's ε after round c0123456789abcde#1 as 0\.4776; the ledger's releases now give 0\.1029/,
    );
  });

  it('every row deleted: refused, not a fresh budget', async () => {
    deleteAllRows();
    await everyBudgetReaderRefuses(
      /privacy ledger rolled back: the memoir's council_event of round 3 .* records 6 releases, the ledger holds 0/,
    );
  });

  it('the memoir rewritten to agree as well: local records cannot tell; the council’s record of each round’s policy can', async () => {
    rewriteLedger({ payloads: true, memoirEpsilons: true });
    // what a local-only reader sees: the rewrite, ε 0.10 for six releases (this is the limit of local anchors)
    expect(await spent()).toBeLessThan(0.11);
    // what `federate round` / `federate status` compare with: the council's round statuses
    const db = openStateDb(ctx.home);
    const ledger = new PrivacyLedger(db);
    const rows: ReleaseRow[] = ledger.releases();
    const status = (round: number): RoundStatus =>
      ({
        round,
        privacy_policy: {
          clip_norm: 1,
          noise_multiplier: 8,
          accepted: { clip_norm: { min: 0.01, max: 1 }, noise_multiplier: { min: 0.5, max: 8 } },
          tail_margin: 6,
        },
        you: { forge: 'athens', submitted: ['metis', 'techne'], sealed: true, trust: 1, exiled: false },
      }) as unknown as RoundStatus;
    expect(() =>
      checkLedger(rows, ledger.envelopes(), councilAnchors(COUNCIL, [status(3), status(2), status(1)], null)),
    ).toThrow(
      /privacy ledger rewritten: release 5 \(metis, round c0123456789abcde#3\) records σ = 1000000, S = 1; the council's round 3 policy accepted only σ in \[0\.5, 8\], S in \[0\.01, 1\]/,
    );
    db.close();
  });
});
