import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/kourai.js', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'kourai-e2e-memory-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** The real binary, with a clean environment and a temporary KOURAI_HOME. */
function kourai(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { KOURAI_HOME: home, HOME: home, PATH: process.env.PATH ?? '', NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const json = <T>(r: { stdout: string }): T => JSON.parse(r.stdout) as T;

describe('e2e (run `npm run build` first): correct, history, episodes, search, buffer on the sample forge', () => {
  it('runs the whole story with the built binary', () => {
    expect(kourai('memoir', 'synth').code).toBe(0);

    const listed = json<{ entries: { entry_id: string }[] }>(
      kourai('memoir', 'inspect', '--agent', 'kallos', '--source', 'specialist_proposed', '--limit', '1', '--json'),
    );
    const id = listed.entries[0]?.entry_id as string;
    expect(id).toMatch(/^[0-9A-Z]{26}$/);

    // a user corrects an entry…
    const fixed = kourai(
      'memoir',
      'supersede',
      id,
      '{"agent_proposed":"rename `x` to `entry_count`"}',
      '--reason',
      'typo in the proposal',
      '--json',
    );
    expect(fixed.code).toBe(0);
    const rev = json<{ entry_id: string; supersedes: string; shared: boolean }>(fixed);
    expect(rev.supersedes).toBe(id);

    // …sees its history…
    const hist = kourai('memoir', 'show', id, '--history');
    expect(hist.code).toBe(0);
    expect(hist.stdout).toContain(`history of ${id}: 2 entries; reads resolve to ${rev.entry_id}`);
    expect(hist.stdout).toContain('reason: typo in the proposal; changed: agent_proposed');
    const histJson = json<{ resolved_from: string; history: { entry_id: string }[] }>(
      kourai('memoir', 'show', id, '--history', '--json'),
    );
    expect(histJson.resolved_from).toBe(id);
    expect(histJson.history.map((h) => h.entry_id)).toEqual([id, rev.entry_id]);

    // …lists episodes with their lessons…
    const eps = kourai('memoir', 'episodes');
    expect(eps.code).toBe(0);
    expect(eps.stdout).toMatch(/^- \(\d{4}-\d{2}-\d{2}, episode, (success|partial|failure)\) .+\. Outcome: /m);
    expect(eps.stdout).toMatch(/^ {4}- lesson: /m);
    const written = json<{ written: number }>(kourai('memoir', 'episodes', '--by', 'session', '--write', '--json'));
    expect(written.written).toBe(4);
    expect(
      json<{ written: number; unchanged: number }>(
        kourai('memoir', 'episodes', '--by', 'session', '--write', '--json'),
      ),
    ).toMatchObject({ written: 0, unchanged: 4 });

    // …searches by text…
    const found = kourai('memoir', 'search', 'entry_count', '--json');
    expect(found.code).toBe(0);
    const hits = json<{ hits: { entry: { entry_id: string } }[] }>(found).hits.map((h) => h.entry.entry_id);
    expect(hits).toContain(rev.entry_id);
    expect(hits).not.toContain(id);
    const twoWords = json<{ query: string; shown: number }>(
      kourai('memoir', 'search', 'naming', 'style', '--limit', '2', '--agent', 'kallos', '--json'),
    );
    expect(twoWords).toMatchObject({ query: 'naming style', shown: 2 });

    // …and previews the replay buffer.
    const preview = kourai('memoir', 'buffer', '--max', '5', '--dry-run');
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain('KEPT (');
    expect(preview.stdout).toContain('dry run: nothing written');
    expect(preview.stderr).toMatch(/warning: load-bearing entries alone \(\d+\) exceed the bound \(5\)/);

    expect(kourai('memoir', 'verify').code).toBe(0);
  });

  it('fails with documented exit codes and a JSON error document', () => {
    const missing = kourai(
      'memoir',
      'supersede',
      '01NOTANIDNOTANIDNOTANIDXYZ',
      '{"affinity_delta":1}',
      '--reason',
      'r',
      '--json',
    );
    expect(missing.code).toBe(6);
    expect(json<{ error: { code: string } }>(missing).error.code).toBe('not_found');
    const noReason = kourai('memoir', 'supersede', 'X', '{}');
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain("required option '--reason <text>'");
    expect(kourai('memoir', 'buffer', '--dry-run').code).toBe(2);
  });
});
