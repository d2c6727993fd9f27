import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { budgetState } from '../../src/privacy/budget.js';
import { DEFAULT_PRIVACY_CONFIG, type PrivacyConfig } from '../../src/privacy/privacy-config.js';
import { PrivacyLedger } from '../../src/store/privacy-ledger.js';
import { openStateDb } from '../../src/store/state-db.js';

/**
 * The ledger under several writer PROCESSES (each its own SQLite connection) and under writers
 * killed with SIGKILL mid-run. The workers use the built library (dist/): `npm test` builds first.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const worker = join(root, 'test/store/fixtures/ledger-worker.mjs');

interface Outcome {
  agent: string;
  round: string;
  outcome: 'released' | 'reused' | 'budget' | 'conflict';
  id?: number;
  data?: string;
}

/**
 * Runs a worker to the end, or, with `killAfterReleases: n`, kills it with SIGKILL as soon as it has
 * reported n new releases: the kill then lands while it works on the next one, never before any work.
 */
function runWorker(
  home: string,
  spec: object,
  opts: { killAfterReleases?: number } = {},
): Promise<{ code: number | null; signal: string | null; outcomes: Outcome[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker, home, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const parse = (): Outcome[] =>
      out
        .split('\n')
        .filter((l) => l.trim().startsWith('{') && l.trim().endsWith('}'))
        .map((l) => JSON.parse(l) as Outcome);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (
        opts.killAfterReleases !== undefined &&
        parse().filter((o) => o.outcome === 'released').length >= opts.killAfterReleases
      )
        child.kill('SIGKILL');
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, outcomes: parse(), stderr: err }));
  });
}

function readLedger(home: string): { ledger: PrivacyLedger; close: () => void } {
  const ledger = new PrivacyLedger(openStateDb(home));
  return { ledger, close: () => ledger.db.close() };
}

let home: string;
beforeAll(() => {
  if (!existsSync(join(root, 'dist/privacy/round-gate.js')))
    throw new Error('dist/ is missing: run `npm run build` (npm test does) before these tests');
});
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kourai-ledger-proc-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const cfg = (over: Partial<PrivacyConfig>): PrivacyConfig => ({ ...DEFAULT_PRIVACY_CONFIG, ...over });
const rounds = (n: number): string[] => Array.from({ length: n }, (_, i) => `r${i}`);

describe('the privacy ledger with concurrent writer processes', () => {
  it('four processes racing on the same agents and rounds: one release per (agent, round), the agent budget never exceeded', async () => {
    // σ = 1: each agent can afford exactly 2 releases within ε = 8.
    const spec = {
      agents: ['aidos', 'metis', 'techne'],
      rounds: rounds(5),
      config: cfg({ noiseMultiplier: 1, forgeEpsilon: 1000 }),
      consent: true,
    };
    const results = await Promise.all([1, 2, 3, 4].map(() => runWorker(home, spec)));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const { ledger, close } = readLedger(home);
    const rows = ledger.releases(); // chain verified
    expect(rows).toHaveLength(6);
    for (const agent of spec.agents)
      expect(rows.filter((r) => r.agent === agent).map((r) => r.round)).toEqual(['r0', 'r1']);
    // every process that lost the race got the winner's noised delta back (or, while the winner
    // was still drawing, a conflict), never fresh noise
    const all = results.flatMap((r) => r.outcomes);
    for (const row of rows) {
      const seen = all.filter((o) => o.agent === row.agent && o.round === row.round);
      expect(seen.filter((o) => o.outcome === 'released')).toHaveLength(1);
      expect(seen.every((o) => ['released', 'reused', 'conflict'].includes(o.outcome))).toBe(true);
      expect(new Set(seen.filter((o) => o.outcome !== 'conflict').map((o) => o.data)).size).toBe(1);
      expect(ledger.payload(row.id)).toBeDefined();
    }
    expect(all.filter((o) => o.outcome === 'budget').length).toBe(4 * 3 * 3); // rounds r2..r4, every process, every agent
    close();
  });

  it('processes for different agents share the forge budget: exactly as many releases as it affords', async () => {
    // σ = 2 at ε_forge = 8: 9 releases fit (see `kourai privacy epsilon --sigma 2 --steps 9`)
    const config = cfg({ noiseMultiplier: 2, agentEpsilon: 1000, forgeEpsilon: 8 });
    const agents = ['hephaestus', 'metis', 'techne', 'dokimasia'];
    const results = await Promise.all(
      agents.map((a) => runWorker(home, { agents: [a], rounds: rounds(6), config, consent: true })),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const { ledger, close } = readLedger(home);
    const rows = ledger.releases();
    expect(rows).toHaveLength(9);
    const eps = budgetState(rows).forge.epsilon(config.delta).epsilon;
    expect(eps).toBeLessThanOrEqual(8);
    expect(
      budgetState([...rows, { agent: 'x', round: 'y', noiseMultiplier: 2, sampleRate: 1 }]).forge.epsilon(config.delta)
        .epsilon,
    ).toBeGreaterThan(8);
    // the recorded cumulative forge ε only grows, in commit order
    for (let i = 1; i < rows.length; i++)
      expect(rows[i]?.epsilonForge).toBeGreaterThan(rows[i - 1]?.epsilonForge as number);
    close();
  });
});

describe('the privacy ledger when a writer is killed mid-run', () => {
  it('killed after the ledger row is committed and before the noise is drawn: the budget stays spent, the round is never re-drawn', async () => {
    const config = cfg({ noiseMultiplier: 1, forgeEpsilon: 1000 }); // two releases per agent fit
    const killed = await runWorker(home, {
      agents: ['aidos'],
      rounds: rounds(3),
      config,
      consent: true,
      dieAtRelease: 1,
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.outcomes.map((o) => [o.round, o.outcome])).toEqual([['r0', 'released']]);
    let { ledger, close } = readLedger(home);
    expect(ledger.releases().map((r) => r.round)).toEqual(['r0', 'r1']); // r1 spent although nothing was drawn
    expect(ledger.payload(2)).toBeUndefined();
    close();
    const again = await runWorker(home, { agents: ['aidos'], rounds: rounds(3), config, consent: true });
    expect(again.code, again.stderr).toBe(0);
    expect(again.outcomes.map((o) => [o.round, o.outcome])).toEqual([
      ['r0', 'reused'],
      ['r1', 'conflict'], // no fresh noise for an interrupted round
      ['r2', 'budget'], // and r1 counts: the agent's two releases are used up
    ]);
    ({ ledger, close } = readLedger(home));
    expect(ledger.releases()).toHaveLength(2);
    close();
  });

  it('stays consistent and never refunds: every kill leaves a valid chain, spent rows stay spent', async () => {
    const config = cfg({ noiseMultiplier: 50, agentEpsilon: 1e6, forgeEpsilon: 1e6 });
    const agents = ['aidos', 'metis'];
    let seen = 0;
    // Each worker walks the same 200 rounds; a restarted worker resumes: released rounds are
    // reused, an interrupted one is a conflict (budget spent, nothing stored), the rest are new.
    // Each is killed once it has released 1–3 new deltas, i.e. in the middle of the next one.
    for (let attempt = 0; attempt < 6; attempt++) {
      const before = seen;
      const r = await runWorker(
        home,
        { agents, rounds: rounds(200), config, consent: true, size: 200_000 },
        { killAfterReleases: 1 + (attempt % 3) },
      );
      // the precondition: the kill landed mid-run, after this run had released something
      expect(r.signal, r.stderr).toBe('SIGKILL');
      const released = r.outcomes.filter((x) => x.outcome === 'released');
      expect(released.length).toBeGreaterThanOrEqual(1 + (attempt % 3));
      const { ledger, close } = readLedger(home);
      const rows = ledger.releases(); // throws IntegrityError if the chain were broken
      expect(rows.length).toBeGreaterThanOrEqual(before + released.length); // never fewer rows: nothing refunded
      // at most one row (the one in flight when killed) lacks its payload per kill
      const missing = rows.filter((row) => ledger.payload(row.id) === undefined);
      expect(missing.length).toBeLessThanOrEqual(attempt + 1);
      for (const o of released) {
        expect(rows.some((row) => row.id === o.id)).toBe(true);
        expect(ledger.payload(o.id as number)).toBeDefined();
      }
      for (let i = 1; i < rows.length; i++)
        expect(rows[i]?.epsilonForge).toBeGreaterThanOrEqual(rows[i - 1]?.epsilonForge as number);
      seen = rows.length;
      close();
    }
    // A final clean run over the same rounds: interrupted rounds are conflicts, never re-drawn
    const last = await runWorker(home, { agents, rounds: rounds(3), config, consent: true, size: 10 });
    expect(last.code, last.stderr).toBe(0);
    const { ledger, close } = readLedger(home);
    const missing = ledger.releases().filter((row) => ledger.payload(row.id) === undefined);
    for (const m of missing.filter((x) => ['r0', 'r1', 'r2'].includes(x.round))) {
      expect(last.outcomes.find((o) => o.agent === m.agent && o.round === m.round)?.outcome).toBe('conflict');
    }
    close();
  }, 180_000); // six workers, each run until its kill: room for a loaded machine (no timing is asserted)
});
