import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorDocumentSchema } from '../../src/output/error-schema.js';
import { assertBuilt, kourai, sampleHome } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';

/**
 * The output contract of the real binary: machine-readable modes print only machine-readable
 * lines on stdout; every error under --json (commander's included) is the JSON error document;
 * every human error starts `kourai: `.
 */
let sample: { home: string; memoirs: string[] };
beforeAll(() => {
  assertBuilt();
  sample = sampleHome();
});
afterAll(() => removeDir(sample.home));

const run = (args: string[]) => kourai(args, sample.home);

describe('errors under --json are the JSON error document', () => {
  it.each([
    [['memoir', 'buffer', '--json'], 2, /required option '--max <n>' not specified/],
    [
      ['memoir', 'inspect', '--split', 'bogus', '--json'],
      2,
      /argument 'bogus' is invalid\. Allowed choices are shared, private/,
    ],
    [['--bogus', '--json'], 2, /unknown option '--bogus'/],
    [['memoir', 'inspect', '--bogus', '--json'], 2, /unknown option '--bogus'/],
    [['memoir', 'frobnicate', '--json'], 2, /unknown command 'frobnicate'/],
    [['memoir', 'inspect', '--limit', 'abc', '--json'], 2, /^--limit: "abc" is not a number$/],
    [['memoir', 'show', 'NOSUCHID', '--json'], 6, /no entry with id "NOSUCHID"/],
    [['memoir', 'inspect', '--text', 'x', '--ndjson', '--memoir', '/nonexistent'], 6, /no such file or directory/],
  ])('kourai %j', (args, code, message) => {
    const r = run(args);
    expect(r.code).toBe(code);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const doc = ErrorDocumentSchema.parse(JSON.parse(lines[0] as string));
    expect(doc.error.exit_code).toBe(code);
    expect(doc.error.message).toMatch(message);
    expect(r.stderr.startsWith(`kourai: ${doc.error.message}\n`)).toBe(true);
  });
});

describe('human errors start the same way', () => {
  it.each([
    [['memoir', 'inspect', '--bogus']],
    [['memoir', 'buffer']],
    [['memoir', 'inspect', '--split', 'bogus']],
    [['frobnicate']],
    [['memoir', 'show', 'NOSUCHID']],
  ])('kourai %j', (args) => {
    const r = run(args);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^kourai: \S/);
    expect(r.stderr).not.toMatch(/^error: /m);
  });

  it('a usage error hints the help of the command that refused it', () => {
    const r = run(['memoir', 'inspect', '--bogus']);
    expect(r.stderr).toContain('hint: see `kourai memoir inspect --help`');
  });
});

describe('streams print only JSON lines on stdout', () => {
  const jsonLines = (stdout: string): unknown[] =>
    stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown);

  it('memoir inspect --ndjson: one entry a line, no summary', () => {
    const r = run(['memoir', 'inspect', '--text', 'naming', '--ndjson']);
    expect(r.code).toBe(0);
    const records = jsonLines(r.stdout) as { entry_id: string }[];
    expect(records.length).toBeGreaterThan(0);
    for (const e of records) expect(typeof e.entry_id).toBe('string');
  });

  it('memoir inspect --ndjson with no match: empty stdout', () => {
    const r = run(['memoir', 'inspect', '--text', 'zzzznothingzzzz', '--ndjson']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('memoir replay --ndjson (and its alias --json): the same records', () => {
    const a = run(['memoir', 'replay', '--ndjson', '--agent', 'cupid']);
    const b = run(['memoir', 'replay', '--json', '--agent', 'cupid']);
    expect(a.code).toBe(0);
    expect(jsonLines(a.stdout).length).toBeGreaterThan(0);
    expect(a.stdout).toBe(b.stdout);
  });
});

describe('escape sequences in memoir text never reach the terminal', () => {
  it('memoir search shows them as symbols', () => {
    const file = sample.memoirs[0] as string;
    const before = readFileSync(file);
    const attack = '\u001b[2J\u001b]0;PWNED\u0007 zebrafish';
    const entry = {
      scene_id: 'session-0badc0de.turn-0',
      agent: 'techne',
      source: 'specialist_proposed',
      agent_proposed: attack,
    };
    const dir = `${sample.home}/evil`;
    expect(
      kourai(['memoir', 'append', '--memoir', `${dir}/memoir.jsonl`, JSON.stringify(entry)], sample.home).code,
    ).toBe(0);
    for (const args of [
      ['memoir', 'search', 'zebrafish', '--memoir', dir],
      ['memoir', 'inspect', '--memoir', dir],
      [
        'memoir',
        'show',
        '--memoir',
        dir,
        JSON.parse(run(['memoir', 'inspect', '--memoir', dir, '--json']).stdout).entries[0].entry_id as string,
      ],
      ['memoir', 'replay', '--memoir', dir],
    ]) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
    expect(readFileSync(file)).toEqual(before);
  });
});

describe('a memoir whose lines are all invalid is never silently "0 entries"', () => {
  it('inspect, affinity, search and replay --no-input say how many lines were skipped and point to verify', () => {
    const dir = `${sample.home}/broken`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/memoir.jsonl`, '{"not":"an entry"}\nnot json at all\n{"agent":"techne"}\n');
    for (const args of [
      ['memoir', 'inspect', '--memoir', dir],
      ['affinity', '--memoir', dir],
      ['memoir', 'search', 'anything', '--memoir', dir],
      ['memoir', 'replay', '--no-input', '--memoir', dir],
      ['memoir', 'inspect', '--memoir', dir, '--json'],
    ]) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stderr, args.join(' ')).toMatch(
        /^warning: 3 lines of 1 memoir are not a valid entry and were skipped; see `kourai memoir verify`$/m,
      );
    }
  });
});
