import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderWhisperText } from '../../src/commands/whisper.js';
import type { WhisperReport } from '../../src/privacy/whisper-report.js';
import { runCli } from '../helpers/run.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';
import { knownShareable, writeKnownForge } from '../helpers/known-forge.js';
import { startTestCouncil } from '../council/helpers.js';
import { roundCost } from '../../src/privacy/council-policy.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';

const whisperCmd = () => import('../../src/commands/whisper.js');
const synthCmd = () => import('../../src/commands/memoir/synth.js');
const consentCmd = () => import('../../src/commands/federate/consent.js');
const releaseCmd = () => import('../../src/commands/privacy/release.js');
const joinCmd = () => import('../../src/commands/federate/join.js');
const leaveCmd = () => import('../../src/commands/federate/leave.js');

let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => ctx.cleanup());

const whisper = async (raw: Record<string, unknown> = {}): Promise<WhisperReport> =>
  (await runCli(whisperCmd, { memoir: [], json: true, ...raw }, ctx)).json as WhisperReport;

describe('kourai whisper', () => {
  it('before anything: full capacity, nobody speaks (no consent), a note when there are no memoirs', async () => {
    const r = await whisper();
    expect(r.forge).toMatchObject({
      epsilon_budget: 8,
      epsilon_spent: 0,
      remaining_fraction: 1,
      releases: 0,
      level: 'ok',
      speakers_next_round: 0,
    });
    expect(r.agents.filter((a) => a.consent !== 'locked').every((a) => a.verdict === 'no_consent')).toBe(true);
    expect(r.notes[0]).toMatch(/no memoirs found/);
    expect(r.config).toMatchObject({
      forge_epsilon: 8,
      agent_epsilon: 8,
      delta: 1e-5,
      noise_multiplier: 8,
      clip_norm: 1,
      origin: { noise_multiplier: 'default' },
    });
  });

  it('counts shareable entries per agent as labelled by hand: private sources, lenient splits and revision chains excluded', async () => {
    writeKnownForge(ctx.home);
    const expected = knownShareable();
    expect(expected).toMatchObject({ metis: 3, techne: 2, aidos: 2, kallos: 0, cupid: 0, puck: 0 });
    const r = await whisper();
    for (const a of r.agents) expect(a.shareable_entries, a.agent).toBe(expected[a.agent] ?? 0);
  });

  it('on the sample forge: the plan follows consent and the shareable counts', async () => {
    await runCli(synthCmd, { json: true }, ctx);
    await runCli(consentCmd, { allow: ['techne,kallos,aidos'] }, ctx);
    const r = await whisper();
    const cupid = r.agents.find((a) => a.agent === 'cupid');
    expect(cupid).toMatchObject({ shareable_entries: 0, verdict: 'bond_only', consent: 'locked' });
    const speakers = r.agents
      .filter((a) => a.speaks)
      .map((a) => a.agent)
      .sort();
    expect(speakers).toEqual(
      ['aidos', 'kallos', 'techne']
        .filter((a) => (r.agents.find((x) => x.agent === a)?.shareable_entries ?? 0) > 0)
        .sort(),
    );
    expect(speakers.length).toBeGreaterThan(0);
    expect(r.forge.speakers_next_round).toBe(speakers.length);
    for (const a of r.agents.filter((x) => x.speaks)) {
      expect(a).toMatchObject({ clip_norm: 1, noise_multiplier: 8 });
      expect(a.next_round_epsilon_cost).toBeGreaterThan(0);
      expect(a.next_round_forge_cost).toBeGreaterThan(0);
    }
  });

  it('reflects the ledger: spent capacity, past contribution magnitudes, agents that already spoke this --round', async () => {
    const file = join(ctx.home, 'delta.json');
    writeFileSync(file, JSON.stringify({ tensors: [{ name: 'w', shape: [2], data: [0.3, 0.4] }] }));
    await runCli(synthCmd, { json: true }, ctx);
    await runCli(consentCmd, { allow: ['techne'] }, ctx);
    await runCli(
      releaseCmd,
      { agent: 'techne', round: 'r1', file, noiseMultiplier: '2', baseFingerprint: 'sha256:test-base' },
      ctx,
    );
    const r = await whisper({ round: 'r1', noiseMultiplier: '2' });
    const techne = r.agents.find((a) => a.agent === 'techne');
    expect(techne).toMatchObject({ verdict: 'already_released', releases: 1, speaks: false });
    expect(techne?.contributions).toHaveLength(1);
    expect(techne?.contributions[0]?.clipped_fraction).toBeCloseTo(0.5, 6); // ||(0.3, 0.4)|| = 0.5 of S = 1
    expect(techne?.epsilon_spent).toBeGreaterThan(0);
    expect(r.forge.epsilon_spent).toBeCloseTo(techne?.epsilon_spent as number, 12);
    expect(r.forge.remaining_fraction).toBeLessThan(1);
    expect(r.config.origin.noise_multiplier).toBe('flag');
    const next = await whisper({ round: 'r2', noiseMultiplier: '2' });
    expect(next.agents.find((a) => a.agent === 'techne')?.verdict).toBe('speaks');
  });

  it('renders plain text (no Ink) in a non-interactive run: bars, verdicts, bond-only lines', async () => {
    await runCli(synthCmd, { json: true }, ctx);
    await runCli(consentCmd, { allow: ['metis'] }, ctx);
    const { stdout } = await runCli(whisperCmd, { memoir: [] }, ctx);
    expect(stdout).toMatch(/^Whisper Limit\nforge {2}█{24} 100% left/);
    expect(stdout).toMatch(/metis\s+█{12} 100%\s+speaks\s+\d+ shareable\s+\+0\.4776 ε/);
    expect(stdout).toMatch(/hephaestus .*silent .*no consent/);
    expect(stdout).toMatch(/cupid\s+bond-only: never leaves the forge/);
    expect(stdout).not.toMatch(/\u001b\[/); // colour level 0
  });

  it('the text renderer colours by level when colour is on', () => {
    const base: WhisperReport = {
      round: null,
      config: {
        forge_epsilon: 8,
        agent_epsilon: 8,
        delta: 1e-5,
        noise_multiplier: 8,
        clip_norm: 1,
        origin: {},
        file: null,
      },
      forge: {
        epsilon_budget: 8,
        epsilon_spent: 7,
        remaining_fraction: 0.125,
        releases: 140,
        level: 'critical',
        epsilon_after_next_round: 7,
        speakers_next_round: 0,
      },
      agents: [],
      priced_at: { source: 'forge', noise_multiplier: 8, clip_norm: 1, council_round: null, seen_at: null },
      notes: [],
    };
    expect(renderWhisperText(base, 1)).toContain('\u001b[31m'); // red
    expect(renderWhisperText({ ...base, forge: { ...base.forge, level: 'ok', remaining_fraction: 0.9 } }, 1)).toContain(
      '\u001b[32m',
    ); // green
  });

  it('a joined forge is priced at the council’s last published σ (and says so); not joined or after leaving, at its own', async () => {
    await runCli(synthCmd, { json: true }, ctx);
    await runCli(consentCmd, { allow: ['techne'] }, ctx);
    const own = await whisper();
    expect(own.priced_at).toEqual({
      source: 'forge',
      noise_multiplier: 8,
      clip_norm: 1,
      council_round: null,
      seen_at: null,
    });
    const techneOwn = own.agents.find((a) => a.agent === 'techne');
    expect(techneOwn?.next_round_epsilon_cost).toBeCloseTo(roundCost(8, 1e-5), 9);
    // The test council publishes σ = 10 (the forge's own is 8); join records it.
    const council = await startTestCouncil({ base_fingerprints: [BUILTIN_FINGERPRINT] });
    try {
      await runCli(joinCmd, { server: council.url, token: await council.token('athens') }, ctx);
      const joined = await whisper();
      expect(joined.priced_at).toMatchObject({
        source: 'council',
        noise_multiplier: 10,
        clip_norm: 1,
        council_round: 1,
      });
      const techne = joined.agents.find((a) => a.agent === 'techne');
      expect(techne?.next_round_epsilon_cost).toBeCloseTo(roundCost(10, 1e-5), 9);
      expect(techne?.next_round_epsilon_cost).toBeLessThan(techneOwn?.next_round_epsilon_cost as number);
      // the forge's own settings are still reported as its own
      expect(joined.config).toMatchObject({ noise_multiplier: 8, origin: { noise_multiplier: 'default' } });
      expect(joined.notes.join('\n')).toMatch(/at the council's σ = 10, S = 1 \(its policy of round 1, seen /);
      const text = (await runCli(whisperCmd, { memoir: [] }, ctx)).stdout;
      expect(text).toMatch(/noise σ = 10 \(the council's, round 1\)/);
      await runCli(leaveCmd, {}, ctx);
      expect((await whisper()).priced_at.source).toBe('forge');
      expect((await runCli(whisperCmd, { memoir: [] }, ctx)).stdout).toMatch(/noise σ = 8 \(this forge's\)/);
    } finally {
      await council.close();
    }
  });
});
