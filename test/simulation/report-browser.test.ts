import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../src/simulation/report/html.js';
import { summarize } from '../../src/simulation/summary.js';
import { FIXTURE_EXPERIMENT, fixtureCells } from './fixture-summary.js';

// Debian's chromium (.ci/run installs it when missing); never a downloaded browser. The fresh
// profile directory is the user data dir (playwright passes it as --user-data-dir itself).
const which = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' });
const executable = which.status === 0 ? which.stdout.trim() : null;
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

describe('the HTML report in a real browser', () => {
  it('renders every chart with JavaScript off and fetches nothing', async (t) => {
    if (!executable) return t.skip('chromium is not installed (Debian package `chromium`; .ci/run installs it)');
    const dir = mkdtempSync(join(tmpdir(), 'kourai-report-'));
    const file = join(dir, 'report.html');
    const x = FIXTURE_EXPERIMENT;
    writeFileSync(
      file,
      renderHtml(x, summarize(x, fixtureCells(), 18), { id: 'fixture', generatedAt: '2026-11-22T10:00:00.000Z' }),
    );
    const profile = mkdtempSync(join(tmpdir(), 'kourai-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: executable,
      headless: true,
      args: FLAGS,
      javaScriptEnabled: false,
      viewport: { width: 1280, height: 900 },
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      const url = pathToFileURL(file).href;
      await page.goto(url, { waitUntil: 'load' });
      expect(requests).toEqual([url]);
      const charts = page.locator('svg.chart');
      // rounds per strategy (2), privacy (2: ε and rounds, every noise variant), personalization, cold start, Aidos and split (3)
      expect(await charts.count()).toBe(8);
      for (let i = 0; i < 7; i++) {
        const box = await charts.nth(i).boundingBox();
        expect(box?.width).toBeGreaterThan(300);
        expect(box?.height).toBeGreaterThan(150);
      }
      // lines are drawn with the measured points, bars have height
      const strokes = page.locator('svg[data-chart="rounds-fedavg-naive"] polyline');
      expect(await strokes.count()).toBe(3);
      for (let i = 0; i < 3; i++) {
        const b = await strokes.nth(i).boundingBox();
        expect(b?.width).toBeGreaterThan(100);
      }
      const bars = page.locator('svg[data-chart="personalization"] rect.bar');
      expect(await bars.count()).toBe(9);
      for (let i = 0; i < 9; i++) expect((await bars.nth(i).boundingBox())?.height).toBeGreaterThan(10);
      // the worst case is marked, the targets say met or MISSED
      expect(await page.locator('table.byzantine td.worst').count()).toBe(2);
      await expect(page.locator('#targets + table').innerText()).resolves.toMatch(
        /byzantine robustness: naive fedavg collapses\s+.*met/,
      );
      // the ε curve has one line per noise variant; the split chart has the semantic split and both controls
      expect(await page.locator('svg[data-chart="privacy"] polyline').count()).toBe(4);
      await expect(page.locator('#split + p + table').innerText()).resolves.toMatch(
        /semantic[\s\S]*param-random[\s\S]*fedsa/,
      );
      // Aidos F1 by round: the federated adapter, a single forge alone; flat: its converged bond, and calling everything slop
      const aidos = page.locator('svg[data-chart="aidos"] polyline');
      expect(await aidos.count()).toBe(4);
      for (let i = 0; i < 4; i++) expect((await aidos.nth(i).boundingBox())?.width).toBeGreaterThan(100);
      await expect(page.locator('#targets + table').innerText()).resolves.toMatch(
        /Aidos slop-detection F1: federated council beats a single forge[^\n]*\n?[\s\S]*?met/,
      );
      await expect(page.locator('#aidos + p + table').innerText()).resolves.toMatch(/^round[\s\S]*\n1\t[\s\S]*\n3\t/);
      // cold start: one line per adapter set over the session counts, each point drawn
      const cold = page.locator('svg[data-chart="cold-start"] polyline');
      expect(await cold.count()).toBe(3);
      for (let i = 0; i < 3; i++) expect((await cold.nth(i).boundingBox())?.width).toBeGreaterThan(100);
      await expect(page.locator('#targets + table').innerText()).resolves.toMatch(
        /cold start: the fewer sessions[^\n]*\n?[\s\S]*?met/,
      );
      await expect(page.locator('#cold-start + p + table').innerText()).resolves.toMatch(
        /^sessions[\s\S]*\n1\t[\s\S]*\n8\t/,
      );
      // a screenshot is not blank: the PNG of a chart differs from a blank one of the same size
      const shot = await charts.nth(0).screenshot();
      expect(shot.length).toBeGreaterThan(5000);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
