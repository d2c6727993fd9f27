import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../src/cli.js';
import { HELP } from '../../src/help.js';
import { defaults as councilDefaults } from '../../src/council/config.js';
import { resolveOptions } from '../../src/run-command.js';
import { testCtx } from '../helpers/ctx.js';

/**
 * Discoverability from `--help` alone: every command's help ends with examples and the exit
 * codes it can return (a screen's help lists its keys); every example parses to the command it
 * illustrates; `kourai help A B` is B's help; `kourai completion SHELL` prints a working script.
 */
function tree(): { program: Command; out: () => string; reached: () => string | undefined } {
  let text = '';
  let reached: string | undefined;
  const program = buildCli(
    () => testCtx(),
    () => undefined,
    async (load, raw) => {
      await resolveOptions((await load()).default as never, raw);
      return 0;
    },
  );
  const visit = (c: Command): void => {
    c.configureOutput({ writeOut: (s) => (text += s), writeErr: () => undefined, outputError: () => undefined });
    c.commands.forEach(visit);
  };
  visit(program);
  program.hook('preAction', (_root, action) => {
    reached = pathOf(action);
  });
  return { program, out: () => text, reached: () => reached };
}

function pathOf(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x?.parent; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}

function leaves(c: Command): Command[] {
  const subs = c.commands.filter((x) => x.name() !== 'help');
  return subs.length === 0 ? [c] : subs.flatMap(leaves);
}

function helpOf(c: Command, out: () => string): string {
  const before = out().length;
  c.outputHelp();
  return out().slice(before);
}

/** Splits an example into argv the way a POSIX shell would (single and double quotes). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const m of line.matchAll(re)) words.push(m[1] ?? m[2] ?? m[3] ?? '');
  return words;
}

const { program, out } = tree();
const all = leaves(program).map((c) => [pathOf(c), c] as const);

describe('every command’s --help', () => {
  it('the table in src/help.ts names exactly the commands of the tree', () => {
    expect(Object.keys(HELP).sort()).toEqual(all.map(([p]) => p).sort());
  });

  it.each(all)('%s: ends with examples and the exit codes', (_path, c) => {
    const text = helpOf(c, out);
    expect(text).toMatch(/\nExamples:\n {2}\$ kourai /);
    const codes = text.slice(text.lastIndexOf('Exit codes:'));
    expect(text.trimEnd().endsWith(codes.trimEnd())).toBe(true);
    for (const c0 of ['0', '2', '130']) expect(codes).toMatch(new RegExp(`\\n\\s+${c0}  \\S`));
    expect(text).not.toMatch(/\(default: \[\]\)|\(default: "/);
  });

  it('groups and the root end with examples and exit codes too', () => {
    for (const c of [program, ...program.commands.filter((x) => x.commands.length > 0)]) {
      const text = helpOf(c, out);
      expect(text).toMatch(/\nExamples:\n {2}\$ kourai /);
      expect(text.trimEnd()).toMatch(/\nExit codes:\n[\s\S]*(cancelled|130)[^\n]*$/);
    }
  });

  it.each(Object.entries(HELP).flatMap(([path, h]) => h.examples.map(([argv]) => [path, argv] as const)))(
    '%s: example `kourai %s` parses to that command',
    async (path, argv) => {
      const t = tree();
      await t.program.parseAsync(shellWords(argv), { from: 'user' });
      expect(t.reached()).toBe(path);
    },
  );

  it('the screens list their keys, the same as behind ?', () => {
    const replay = helpOf(
      program.commands.find((c) => c.name() === 'memoir')!.commands.find((c) => c.name() === 'replay')!,
      out,
    );
    expect(replay).toMatch(/Keys \(also behind \? on the screen\):\n {2}→ l Enter +next beat/);
    for (const [group, name] of [
      ['federate', 'consent'],
      [null, 'whisper'],
      [null, 'feedback'],
    ] as const) {
      const parent = group ? program.commands.find((c) => c.name() === group)! : program;
      expect(
        helpOf(
          parent.commands.find((c) => c.name() === name)!,
          out,
        ),
      ).toMatch(/Keys \(also behind \? on the screen\):\n/);
    }
  });

  it('defaults show once, as typed', () => {
    const synth = helpOf(
      program.commands.find((c) => c.name() === 'memoir')!.commands.find((c) => c.name() === 'synth')!,
      out,
    );
    expect(synth).toMatch(/--sessions <n> +number of sessions \(default: 4\)/);
    const inspect = helpOf(
      program.commands.find((c) => c.name() === 'memoir')!.commands.find((c) => c.name() === 'inspect')!,
      out,
    );
    expect(inspect).toMatch(/default: every memoir\s+under\s+\$KOURAI_HOME\)\n/);
    expect(inspect).not.toMatch(/\$KOURAI_HOME\) \(default/);
  });
});

describe('kourai help <command path>', () => {
  it('help council serve is the help of council serve (not of council)', async () => {
    const t = tree();
    await t.program.parseAsync(['help', 'council', 'serve'], { from: 'user' });
    expect(t.out()).toMatch(/^Usage: kourai council serve \[options\]/);
    const u = tree();
    await u.program.parseAsync(['help', 'memoir'], { from: 'user' });
    expect(u.out()).toMatch(/^Usage: kourai memoir \[options\] \[command\]/);
  });

  it('council serve --help states the defaults the council uses, and how the fingerprint and inline layouts work', async () => {
    const t = tree();
    await t.program.parseAsync(['help', 'council', 'serve'], { from: 'user' });
    const help = t.out().replace(/\s+/g, ' ');
    const d = councilDefaults('/home');
    const range = (r: { min: number; max: number }): string => (r.min === r.max ? `${r.min}` : `${r.min}..${r.max}`);
    expect(help).toContain(
      `--noise-multiplier <range> privacy policy: noise multipliers sigma forges may declare, e.g. 8 or 4..16 (default ${range(d.noise_multiplier)})`,
    );
    expect(help).toContain(`(default ${range(d.clip_norm)})`);
    expect(help).toMatch(/--base-fingerprint <sha> .*required unless --layouts derives from the built-in base/);
    expect(help).toMatch(/--layouts <file\|json> .*inline JSON: \{"derive": \{"base": "builtin", "rank": 8\}\}/);
  });

  it('federate simulate --help shows how to reproduce every claim: the at-scale command, the targets, the docs page', async () => {
    const t = tree();
    await t.program.parseAsync(['help', 'federate', 'simulate'], { from: 'user' });
    const help = t.out().replace(/\s+/g, ' ');
    expect(help).toContain('kourai federate simulate --forges 1000 --cohort 100 --seeds');
    expect(help).toMatch(/kourai federate simulate [^$]*--json .*targets/);
    expect(help).toMatch(/docs\/evaluation\.md/);
  });

  it('an unknown path is a usage error naming it', async () => {
    await expect(tree().program.parseAsync(['help', 'council', 'nope'], { from: 'user' })).rejects.toThrow(
      /^unknown command "council nope"$/,
    );
  });
});

describe('kourai completion', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kourai-completion-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function script(shell: string): Promise<string> {
    const ctx = testCtx();
    let code = -1;
    await buildCli(
      () => ctx,
      (c) => (code = c),
    ).parseAsync(['completion', shell], { from: 'user' });
    expect(code).toBe(0);
    return ctx.stdout.text;
  }

  it('bash: completes commands, subcommands, options and choices (in a real bash)', async () => {
    const file = join(dir, 'kourai.bash');
    writeFileSync(file, await script('bash'));
    const complete = (...words: string[]): string[] => {
      const arr = words.map((w) => `'${w}'`).join(' ');
      const r = spawnSync(
        'bash',
        [
          '-c',
          `source ${file}; COMP_WORDS=(kourai ${arr}); COMP_CWORD=${words.length}; _kourai; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: 'utf8' },
      );
      expect(r.stderr).toBe('');
      return r.stdout.split('\n').filter(Boolean);
    };
    expect(complete('me')).toEqual(['memoir']);
    expect(complete('memoir', 're')).toEqual(['repair', 'replay']);
    expect(complete('memoir', 'inspect', '--split', '')).toEqual(['shared', 'private']);
    expect(complete('council', 'forge', '')).toEqual(['add', 'list', 'revoke', 'rotate', '-h', '--help']);
    expect(complete('help', 'x')).toEqual([]);
    expect(complete('memoir', 'inspect', '--nd')).toEqual(['--ndjson']);
    expect(complete('memoir', 'inspect', '--memoir', '')).toEqual([]); // files (complete -o default)
    expect(complete('--no-color', 'privacy', 'ep')).toEqual(['epsilon']);
  });

  it.for(['zsh', 'fish'])('%s: the script parses in that shell', async (shell, ctx) => {
    const text = await script(shell);
    expect(text).toContain('memoir');
    expect(text).toContain('--ndjson');
    const has = spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
    if (!has)
      ctx.skip(`${shell} is not installed, so its completion script's syntax was not checked (.ci/run installs it)`);
    const file = join(dir, `kourai.${shell}`);
    writeFileSync(file, text);
    const r = spawnSync(shell, ['-n', file], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('--json is {shell, script}; an unknown shell is a usage error', async () => {
    const ctx = testCtx();
    await buildCli(
      () => ctx,
      () => undefined,
    ).parseAsync(['completion', 'fish', '--json'], { from: 'user' });
    expect(JSON.parse(ctx.stdout.text)).toMatchObject({
      shell: 'fish',
      script: expect.stringContaining('complete -c kourai'),
    });
    await expect(
      buildCli(
        () => testCtx(),
        () => undefined,
      ).parseAsync(['completion', 'tcsh'], { from: 'user' }),
    ).rejects.toThrow(/'tcsh' is invalid.*Allowed choices are bash, zsh, fish/);
  });
});
