import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { kourai } from './run-bin.js';

let home: string;
beforeAll(() => {
  home = tempDir('kourai-e2e-');
});
afterAll(() => removeDir(home));

describe('the kourai binary', () => {
  it('--version and --help load neither Ink, React, SQLite nor the server', () => {
    const trace = join(home, 'trace.txt');
    for (const args of [['--version'], ['--help'], ['memoir', 'inspect', '--help']]) {
      writeFileSync(trace, '');
      const r = kourai(args, {
        home,
        env: { KOURAI_TRACE_FILE: trace },
        nodeArgs: ['--import', new URL('./fixtures/trace-loads.mjs', import.meta.url).href],
      });
      expect(r.code).toBe(0);
      const loaded = readFileSync(trace, 'utf8');
      expect(loaded).toContain('/dist/cli.js');
      for (const heavy of [
        '/node_modules/ink/',
        '/node_modules/react/',
        '/node_modules/better-sqlite3/',
        '/node_modules/fastify/',
        '/node_modules/zod/',
      ]) {
        expect(loaded, `${args.join(' ')} loaded ${heavy}`).not.toContain(heavy);
      }
    }
    expect(kourai(['--version'], { home }).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("--version is the program version only before a command: a command option named --version is that command's", () => {
    expect(kourai(['-V'], { home }).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const r = kourai(['adapters', 'show', 'techne', '--version', '3', '--json'], { home });
    expect(r.stdout).not.toMatch(/^\d+\.\d+\.\d+\s*$/);
    expect(r.code).toBe(6); // no adapter version 3 in an empty home
    expect(JSON.parse(r.stdout).error.exit_code).toBe(6);
    expect(kourai(['--help'], { home }).stdout).toContain('-V, --version');
    const below = kourai(['memoir', '--version'], { home });
    expect(below.code).toBe(2);
    expect(below.stderr).not.toContain('Did you mean --version');
    expect(below.stderr).toContain('kourai --version');
  });

  it('synth, stats --json, append from stdin, show, verify: the README walk-through', () => {
    expect(kourai(['memoir', 'synth'], { home }).code).toBe(0);
    const stats = kourai(['memoir', 'stats', '--json'], { home });
    expect(stats.code).toBe(0);
    const s = JSON.parse(stats.stdout);
    expect(s.memoirs).toBe(4);
    const file = join(home, 'mine', 'memoir.jsonl');
    const entry = {
      scene_id: 'session-deadbeef.turn-0',
      agent: 'aletheia',
      source: 'agent_interrupt',
      agent_proposed: 'Citation needed.',
      interrupt: {
        interrupting_agent: 'aletheia',
        target_agent: 'techne',
        target_turn: 'session-deadbeef.turn-0',
        reason_class: 'correction',
        visibility: 'public',
      },
    };
    const ap = kourai(['memoir', 'append', '--memoir', file, '--json'], { home, input: `${JSON.stringify(entry)}\n` });
    expect(ap.code).toBe(0);
    const id = JSON.parse(ap.stdout).entries[0].entry_id as string;
    const shown = kourai(['memoir', 'show', id, '--memoir', file, '--json'], { home });
    expect(JSON.parse(shown.stdout).entry).toMatchObject({
      entry_id: id,
      entry_type: 'interrupt',
      _memoir: { shareable: true },
    });
    const v = kourai(['memoir', 'verify', '--json'], { home });
    expect(v.code).toBe(0);
    expect(JSON.parse(v.stdout).ok).toBe(true);
  });

  it('bad input: one line on stderr, the documented exit code, and nothing written', () => {
    const file = join(home, 'bad', 'memoir.jsonl');
    const good = JSON.stringify({ scene_id: 'session-00000000.turn-0', agent: 'metis', source: 'specialist_proposed' });
    expect(kourai(['memoir', 'append', '--memoir', file, good], { home }).code).toBe(0);
    const before = readFileSync(file);
    const cases: [string[], string, number, RegExp][] = [
      [
        ['memoir', 'append', '--memoir', file],
        `${good}\n{"scene_id":"x","agent":"zeus","source":"specialist_proposed"}\n`,
        5,
        /^kourai: stdin line 2: agent: unknown agent "zeus"/,
      ],
      [['memoir', 'append', '--memoir', file], `${good}\n{not json\n`, 5, /^kourai: stdin line 2: malformed JSON/],
      [
        ['memoir', 'append', '--memoir', file, '{"scene_id":"a","agent":"metis","source":"rumour"}'],
        '',
        5,
        /^kourai: argument: source: unknown source "rumour"/,
      ],
      [
        [
          'memoir',
          'append',
          '--memoir',
          file,
          '{"scene_id":"a","agent":"metis","source":"specialist_proposed","affinity_delta":"high"}',
        ],
        '',
        5,
        /affinity_delta must be a number/,
      ],
      [
        ['memoir', 'inspect', '--memoir', join(home, 'does-not-exist')],
        '',
        6,
        /^kourai: --memoir .*does-not-exist: no such file or directory/,
      ],
      [['memoir', 'inspect', '--memoir', '/dev/null'], '', 3, /not a regular file or directory/],
      [['memoir', 'inspect', '--split', 'public'], '', 2, /Allowed choices are shared, private/],
      [['memoir', 'inspect', '--limit', '-1'], '', 2, /^kourai: --limit:/],
    ];
    for (const [args, input, code, message] of cases) {
      const r = kourai(args, { home, input });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(r.stderr.split('\n')[0]).toMatch(message);
      expect(r.stdout).toBe('');
    }
    expect(readFileSync(file)).toEqual(before);
  });

  it('--json errors are JSON on stdout too', () => {
    const r = kourai(['memoir', 'show', 'NOSUCHID', '--json'], { home });
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'not_found', exit_code: 6 });
  });

  it('verify exits 1 and repair fixes a torn tail', () => {
    const file = join(home, 'torn', 'memoir.jsonl');
    kourai(
      [
        'memoir',
        'append',
        '--memoir',
        file,
        JSON.stringify({ scene_id: 's.turn-0', agent: 'mneme', source: 'specialist_proposed' }),
      ],
      { home },
    );
    appendFileSync(file, '{"scene_id":"s.tu');
    const v = kourai(['memoir', 'verify', '--memoir', file], { home });
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/torn_tail: torn final fragment of 17 bytes/);
    expect(kourai(['memoir', 'repair', '--memoir', file], { home }).code).toBe(0);
    expect(kourai(['memoir', 'verify', '--memoir', file], { home }).code).toBe(0);
  });
});
