import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { FEDERATING_AGENTS } from '../../../src/memoir/format/agents.js';
import { planRound } from '../../../src/privacy/budget.js';
import { noConsent } from '../../../src/privacy/consent.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../../src/privacy/privacy-config.js';
import { buildWhisperReport, type WhisperReport } from '../../../src/privacy/whisper-report.js';
import { palette } from '../../../src/output/theme.js';
import { WhisperApp } from '../../../src/ui/whisper/whisper-app.js';
import { initialWhisperState, whisperReducer } from '../../../src/ui/whisper/use-whisper-state.js';
import { frameWith, KEY, press, waitFor } from '../../helpers/ink-wait.js';

const SIZE = { columns: 100, rows: 30 };

/** A forge where Hephaestus and Metis consented; Metis has spoken twice (σ = 1) and is nearly out of capacity. */
function report(): WhisperReport {
  const config = { ...DEFAULT_PRIVACY_CONFIG, noiseMultiplier: 1, forgeEpsilon: 100 };
  const releases = [
    {
      id: 1,
      agent: 'metis',
      round: 'r1',
      noiseMultiplier: 1,
      sampleRate: 1,
      clipNorm: 1,
      createdAt: '2026-10-01T00:00:00Z',
    },
    {
      id: 2,
      agent: 'metis',
      round: 'r2',
      noiseMultiplier: 1,
      sampleRate: 1,
      clipNorm: 1,
      createdAt: '2026-10-02T00:00:00Z',
    },
  ];
  const plan = planRound({
    releases,
    consent: { ...noConsent(), hephaestus: true, metis: true },
    shareable: { hephaestus: 48, metis: 12, cupid: 30 },
    config,
  });
  const origin = {
    forgeEpsilon: 'flag',
    agentEpsilon: 'default',
    delta: 'default',
    noiseMultiplier: 'flag',
    clipNorm: 'default',
  } as const;
  return buildWhisperReport({
    plan,
    origin,
    file: null,
    releases,
    norms: new Map([[1, { clippedNorm: 0.42, releasedNorm: 31 }]]),
  });
}

describe('the Whisper Limit gauge (Ink)', () => {
  it('shows capacity bars, who speaks and why, and Cupid/Puck as bond-only', async () => {
    const app = render(<WhisperApp report={report()} palette={palette(1)} size={SIZE} onDone={() => undefined} />);
    await waitFor(() => (app.lastFrame() ?? '').includes('Whisper Limit'), app.lastFrame);
    const f = app.lastFrame() ?? '';
    expect(f).toMatch(/forge\s+█+░*\s+\d+% left/);
    expect(f).toMatch(/hephaestus\s+████████████\s+100%\s+speaks\s+48 shareable\s+\+4\.7\d* ε/);
    expect(f).toMatch(/metis\s+█*░+\s+\d+%\s+silent\s+12 shareable\s+its capacity would run out/);
    expect(f).toMatch(/techne.*silent.*no consent/);
    expect(f).toMatch(/cupid\s+bond-only: never leaves the forge/);
    expect(f).toMatch(/puck\s+bond-only: never leaves the forge/);
    expect(f).toMatch(/next round: 1 speak/);
    expect(f).toMatch(/σ = 1 \(this forge's\)/);
    app.unmount();
  });

  it('a report priced at the council’s policy says so on the next-round line', async () => {
    const r = {
      ...report(),
      priced_at: {
        source: 'council' as const,
        noise_multiplier: 10,
        clip_norm: 1,
        council_round: 3,
        seen_at: '2026-11-23T06:00:00Z',
      },
    };
    const app = render(
      <WhisperApp report={r} palette={palette(1)} size={{ columns: 160, rows: 30 }} onDone={() => undefined} />,
    );
    await waitFor(() => (app.lastFrame() ?? '').includes('Whisper Limit'), app.lastFrame);
    expect(app.lastFrame() ?? '').toMatch(/σ = 10 \(the council's, round 3\)/);
    app.unmount();
  });

  it('selects an agent and opens its details with past contribution magnitudes; q closes', async () => {
    let closed: string | null = null;
    const app = render(
      <WhisperApp report={report()} palette={palette(1)} size={SIZE} onDone={(how) => (closed = how)} />,
    );
    await waitFor(() => (app.lastFrame() ?? '').includes('Whisper Limit'), app.lastFrame);
    await press(app.stdin, KEY.down, KEY.enter);
    await waitFor(() => (app.lastFrame() ?? '').includes('past contributions'), app.lastFrame);
    const f = app.lastFrame() ?? '';
    expect(f).toMatch(/› metis/);
    expect(f).toMatch(/consent: given · ε spent 7\.077 of 8/);
    expect(f).toMatch(/r1: 0\.42\s+r2: not drawn/);
    expect(f).toMatch(/12 shareable entries, clip norm S = 1, noise σ = 1/);
    await press(app.stdin, 'q');
    await waitFor(() => closed === 'quit', app.lastFrame);
    app.unmount();
  });

  it('Esc closes the details first, then the screen; Ctrl-C cancels', async () => {
    let closed: string | null = null;
    const app = render(
      <WhisperApp report={report()} palette={palette(1)} size={SIZE} onDone={(how) => (closed = how)} />,
    );
    await press(app.stdin, KEY.enter);
    await waitFor(() => (app.lastFrame() ?? '').includes('past contributions'), app.lastFrame);
    await press(app.stdin, KEY.escape);
    await waitFor(() => !(app.lastFrame() ?? '').includes('past contributions'), app.lastFrame);
    expect(closed).toBeNull();
    await press(app.stdin, KEY.escape);
    await waitFor(() => closed === 'quit', app.lastFrame);
    app.unmount();
    let cancelled: string | null = null;
    const again = render(
      <WhisperApp report={report()} palette={palette(1)} size={SIZE} onDone={(how) => (cancelled = how)} />,
    );
    await press(again.stdin, '\u0003');
    await waitFor(() => cancelled === 'cancel', again.lastFrame);
    again.unmount();
  });

  it('a terminal too small says what the gauge needs instead of drawing it one letter a line', async () => {
    // ink-testing-library's output is 100 columns wide and reports no height: the height is ours.
    const app = render(
      <WhisperApp report={report()} palette={palette(0)} size={{ columns: 40, rows: 10 }} onDone={() => undefined} />,
    );
    const f = await frameWith(app.lastFrame, 'needs at least 80×24');
    expect(f).toContain('The terminal is 100×10');
    expect(f.split('\n').length).toBeLessThanOrEqual(4);
    app.unmount();
  });

  it('reducer: wraps around, toggles details, ignores keys once closed', () => {
    const r = whisperReducer(10);
    const s0 = initialWhisperState();
    expect(r(s0, { type: 'up' }).cursor).toBe(9);
    expect(r(r(s0, { type: 'down' }), { type: 'down' }).cursor).toBe(2);
    expect(r(s0, { type: 'toggleDetails' }).details).toBe(true);
    const done = r(s0, { type: 'quit' });
    expect(done.done).toBe('quit');
    expect(r(s0, { type: 'cancel' }).done).toBe('cancel');
    expect(r(done, { type: 'down' })).toBe(done);
    expect(FEDERATING_AGENTS).toHaveLength(8);
  });
});
