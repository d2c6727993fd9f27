import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { palette } from '../../src/output/theme.js';
import { ScreenFrame } from '../../src/ui/screen-frame.js';
import { MIN_SIZE } from '../../src/ui/terminal.js';
import { ROOT } from '../helpers/bin.js';
import { frameWith } from '../helpers/ink-wait.js';

/** What every screen shares: the size check, the frame, the palette. */
describe('ScreenFrame', () => {
  it('says what the screen needs when the terminal is too small, in a few lines', async () => {
    const app = render(
      <ScreenFrame
        size={{ columns: 40, rows: 10 }}
        min={MIN_SIZE.consent}
        name="Sovereignty Moment"
        palette={palette(0)}
      >
        <Text>{'x'.repeat(500)}</Text>
      </ScreenFrame>,
    );
    const f = await frameWith(app.lastFrame, 'needs at least 70×24');
    expect(f.replace(/\s+/g, ' ')).toContain('The terminal is 40×10; the Sovereignty Moment needs at least 70×24.');
    expect(f).not.toContain('xxx');
    app.unmount();
  });

  it('clips a screen to the terminal height (less one row), so the top never scrolls away', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `line ${i}`);
    const app = render(
      <ScreenFrame size={{ columns: 80, rows: 25 }} min={{ columns: 60, rows: 20 }} name="test" palette={palette(0)}>
        {lines.map((l) => (
          <Text key={l}>{l}</Text>
        ))}
      </ScreenFrame>,
    );
    const f = await frameWith(app.lastFrame, 'line 0');
    expect(f.split('\n')).toHaveLength(24);
    expect(f).toContain('line 23');
    expect(f).not.toContain('line 24');
    app.unmount();
  });
});

describe('every colour on a screen comes from the palette (so NO_COLOR and --no-color reach it)', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
      d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.tsx') ? [join(dir, d.name)] : [],
    );
  it.each(files(join(ROOT, 'src', 'ui')).map((f) => [f.slice(ROOT.length + 1)]))('%s', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    expect(text).not.toMatch(
      /(color|backgroundColor|borderColor)=["'{]\s*['"]?(red|green|yellow|blue|magenta|cyan|white|gray|grey|black)/,
    );
    expect(text).not.toMatch(/\bfrom 'chalk'/);
  });
});
