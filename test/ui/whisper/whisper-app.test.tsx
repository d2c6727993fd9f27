import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { FEDERATING_AGENTS } from '../../../src/memoir/agents.js';
import { planRound } from '../../../src/privacy/budget.js';
import { noConsent } from '../../../src/privacy/consent.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../../src/privacy/privacy-config.js';
import { buildWhisperReport, type WhisperReport } from '../../../src/privacy/whisper-report.js';
import { WhisperApp } from '../../../src/ui/whisper/whisper-app.js';
import { initialWhisperState, whisperReducer } from '../../../src/ui/whisper/use-whisper-state.js';
import { KEY, press, waitFor } from '../../helpers/ink-wait.js';

/** A forge where Hephaestus and Metis consented; Metis has spoken twice (σ = 1) and is nearly out of capacity. */
function report(): WhisperReport {
  const config = { ...DEFAULT_PRIVACY_CONFIG, noiseMultiplier: 1, forgeEpsilon: 100 };
  const releases = [
    { id: 1, agent: 'metis', round: 'r1', noiseMultiplier: 1, sampleRate: 1, clipNorm: 1, createdAt: '2026-10-01T00:00:00Z' },
    { id: 2, agent: 'metis', round: 'r2', noiseMultiplier: 1, sampleRate: 1, clipNorm: 1, createdAt: '2026-10-02T00:00:00Z' },
  ];
  const plan = planRound({ releases, consent: { ...noConsent(), hephaestus: true, metis: true }, shareable: { hephaestus: 48, metis: 12, cupid: 30 }, config });
  const origin = { forgeEpsilon: 'flag', agentEpsilon: 'default', delta: 'default', noiseMultiplier: 'flag', clipNorm: 'default' } as const;
  return buildWhisperReport({ plan, origin, file: null, releases, norms: new Map([[1, { clippedNorm: 0.42, releasedNorm: 31 }]]) });
}

describe('the Whisper Limit gauge (Ink)', () => {
  it('shows capacity bars, who speaks and why, and Cupid/Puck as bond-only', async () => {
    const app = render(<WhisperApp report={report()} />);
    await waitFor(() => (app.lastFrame() ?? '').includes('Whisper Limit'), app.lastFrame);
    const f = app.lastFrame() ?? '';
    expect(f).toMatch(/forge\s+█+░*\s+\d+% left/);
    expect(f).toMatch(/hephaestus\s+████████████\s+100%\s+speaks\s+48 shareable\s+\+4\.7\d* ε/);
    expect(f).toMatch(/metis\s+█*░+\s+\d+%\s+silent\s+12 shareable\s+its capacity would run out/);
    expect(f).toMatch(/techne.*silent.*no consent/);
    expect(f).toMatch(/cupid\s+bond-only: never leaves the forge/);
    expect(f).toMatch(/puck\s+bond-only: never leaves the forge/);
    expect(f).toMatch(/next round: 1 speak/);
    app.unmount();
  });

  it('selects an agent and opens its details with past contribution magnitudes; q closes', async () => {
    let closed = false;
    const app = render(<WhisperApp report={report()} onExit={() => (closed = true)} />);
    await waitFor(() => (app.lastFrame() ?? '').includes('Whisper Limit'), app.lastFrame);
    await press(app.stdin, KEY.down, KEY.enter);
    await waitFor(() => (app.lastFrame() ?? '').includes('past contributions'), app.lastFrame);
    const f = app.lastFrame() ?? '';
    expect(f).toMatch(/› metis/);
    expect(f).toMatch(/consent: given · ε spent 7\.077 of 8/);
    expect(f).toMatch(/r1: 0\.42\s+r2: not drawn/);
    expect(f).toMatch(/12 shareable entries, clip norm S = 1, noise σ = 1/);
    await press(app.stdin, 'q');
    await waitFor(() => closed, app.lastFrame);
    app.unmount();
  });

  it('reducer: wraps around, toggles details, ignores keys once closed', () => {
    const r = whisperReducer(10);
    const s0 = initialWhisperState();
    expect(r(s0, { type: 'up' }).cursor).toBe(9);
    expect(r(r(s0, { type: 'down' }), { type: 'down' }).cursor).toBe(2);
    expect(r(s0, { type: 'toggleDetails' }).details).toBe(true);
    const done = r(s0, { type: 'quit' });
    expect(r(done, { type: 'down' })).toBe(done);
    expect(FEDERATING_AGENTS).toHaveLength(8);
  });
});
