import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBondOnly, type FederatingAgent } from '../../../src/memoir/format/agents.js';
import { STANCES } from '../../../src/privacy/consent.js';
import { ConsentStore } from '../../../src/store/consent-store.js';
import { openStateDb } from '../../../src/store/state-db.js';
import type { DB } from '../../../src/store/db.js';
import { ConsentApp, type ConsentOutcome } from '../../../src/ui/consent/consent-app.js';
import { palette } from '../../../src/output/theme.js';
import { KEY, press, waitFor } from '../../helpers/ink-wait.js';

const SIZE = { columns: 100, rows: 30 };

let home: string;
let db: DB;
let store: ConsentStore;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kourai-consent-ui-'));
  db = openStateDb(home);
  store = new ConsentStore(db);
});
afterEach(() => {
  db.close();
  rmSync(home, { recursive: true, force: true });
});

/** What `kourai federate consent` does with the scene's outcome. */
function storeOutcome(o: ConsentOutcome): void {
  if (!o.confirmed) return;
  store.record(
    o.decision.filter((d): d is { agent: FederatingAgent; allowed: boolean } => !isBondOnly(d.agent)),
    'scene',
    new Date('2026-10-01T12:00:00Z'),
  );
}

describe('the Sovereignty Moment (Ink)', () => {
  it('shows every stance in scene order, toggles agents, refuses Cupid, confirms, and the choice is stored', async () => {
    let outcome: ConsentOutcome | undefined;
    const app = render(
      <ConsentApp
        stances={STANCES}
        current={{}}
        palette={palette(0)}
        size={SIZE}
        onDone={(o) => {
          outcome = o;
          storeOutcome(o);
        }}
      />,
    );
    await waitFor(() => (app.lastFrame() ?? '').includes('Sovereignty Moment'), app.lastFrame);
    const first = app.lastFrame() ?? '';
    const order = [
      'Hephaestus opens',
      'Aidos advocates',
      'Cupid withdraws',
      'Metis measures',
      'Kallos commits',
      'Aletheia caveats',
      'Mneme notes',
      'Dokimasia assents',
      'Techne defers',
    ];
    const positions = order.map((s) => first.indexOf(s));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(first).toMatch(/\[–\] Cupid withdraws · bond-only, locked/);
    expect(first).toMatch(/\[–\] Puck stays · bond-only, locked/);

    await press(app.stdin, KEY.down, KEY.space); // Aidos on
    await waitFor(() => /\[x\] Aidos/.test(app.lastFrame() ?? ''), app.lastFrame);
    await press(app.stdin, KEY.down, KEY.space); // Cupid: locked
    await waitFor(() => (app.lastFrame() ?? '').includes('Cupid is bond-only: locked out'), app.lastFrame);
    expect(app.lastFrame()).toMatch(/\[–\] Cupid/);
    await press(app.stdin, KEY.down, KEY.space); // Metis on
    await waitFor(() => /\[x\] Metis/.test(app.lastFrame() ?? ''), app.lastFrame);
    await press(app.stdin, KEY.enter);
    await waitFor(() => (app.lastFrame() ?? '').includes('May speak for the forge'), app.lastFrame);
    const summary = app.lastFrame() ?? '';
    expect(summary).toMatch(/May speak for the forge: Aidos, Metis/);
    expect(summary).toMatch(/What never leaves the forge/);
    expect(summary).toMatch(/Cupid and Puck/);
    await press(app.stdin, 'y');
    await waitFor(() => outcome !== undefined, app.lastFrame);
    expect(app.lastFrame()).toMatch(/Consent recorded/);

    const now = Object.fromEntries(store.current().map((c) => [c.agent, c.allowed]));
    expect(now).toEqual({
      hephaestus: false,
      metis: true,
      techne: false,
      dokimasia: false,
      kallos: false,
      mneme: false,
      aidos: true,
      aletheia: false,
    });
    expect(store.history()).toHaveLength(1);
    expect(store.history()[0]).toMatchObject({ via: 'scene', decidedAt: '2026-10-01T12:00:00.000Z' });
    expect(store.history()[0]?.agents.map((a) => a.agent)).not.toContain('cupid');
    app.unmount();
  });

  it('starts from the stored consent, can go back from the summary, and "n" then "a" set everyone', async () => {
    store.record([{ agent: 'techne', allowed: true }], 'flags', new Date());
    let outcome: ConsentOutcome | undefined;
    const current = Object.fromEntries(store.current().map((c) => [c.agent, c.allowed]));
    const app = render(
      <ConsentApp
        stances={STANCES}
        current={current}
        palette={palette(0)}
        size={SIZE}
        onDone={(o) => ((outcome = o), storeOutcome(o))}
      />,
    );
    await waitFor(() => /\[x\] Techne/.test(app.lastFrame() ?? ''), app.lastFrame);
    await press(app.stdin, KEY.enter);
    await waitFor(() => (app.lastFrame() ?? '').includes('May speak for the forge: Techne'), app.lastFrame);
    await press(app.stdin, KEY.escape);
    await waitFor(() => (app.lastFrame() ?? '').includes('Space/x toggle'), app.lastFrame);
    await press(app.stdin, 'n');
    await waitFor(() => !/\[x\]/.test(app.lastFrame() ?? ''), app.lastFrame);
    await press(app.stdin, 'a', KEY.enter, KEY.enter);
    await waitFor(() => outcome !== undefined, app.lastFrame);
    expect(store.current().every((c) => c.allowed)).toBe(true);
    app.unmount();
  });

  it('Esc leaves without changing anything (as q does); Ctrl-C cancels', async () => {
    for (const [key, how] of [
      [KEY.escape, 'left'],
      ['q', 'left'],
      ['\u0003', 'cancelled'],
    ] as const) {
      let outcome: ConsentOutcome | undefined;
      const app = render(
        <ConsentApp
          stances={STANCES}
          current={{}}
          palette={palette(0)}
          size={SIZE}
          onDone={(o) => ((outcome = o), storeOutcome(o))}
        />,
      );
      await waitFor(() => (app.lastFrame() ?? '').includes('Sovereignty Moment'), app.lastFrame);
      await press(app.stdin, KEY.down, KEY.space, key);
      await waitFor(() => outcome !== undefined, app.lastFrame);
      expect(outcome).toEqual({ confirmed: false, how });
      expect(app.lastFrame()).toMatch(/Nothing was changed/);
      expect(store.history()).toEqual([]);
      app.unmount();
    }
  });

  it('fits 24 rows: the selected stance is quoted under the list', async () => {
    const app = render(
      <ConsentApp
        stances={STANCES}
        current={{}}
        palette={palette(0)}
        size={{ columns: 80, rows: 24 }}
        onDone={() => undefined}
      />,
    );
    await waitFor(() => (app.lastFrame() ?? '').includes('Sovereignty Moment'), app.lastFrame);
    await press(app.stdin, KEY.down);
    await waitFor(() => (app.lastFrame() ?? '').includes('Aidos: “I have seen patterns'), app.lastFrame);
    const f = app.lastFrame() ?? '';
    expect(f.split('\n').length).toBeLessThanOrEqual(23);
    expect(f).toContain('The Sovereignty Moment');
    expect(f).toMatch(/Enter summary/);
    app.unmount();
  });
});
