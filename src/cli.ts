import { Argument, Command, Help, Option, type CommanderError } from 'commander';
import { createRequire } from 'node:module';
import { adaptersCommands } from './commands/adapters/commands.js';
import { councilCommands } from './commands/council/commands.js';
import { federateCommands } from './commands/federate/commands.js';
import { memoirCommands } from './commands/memoir/commands.js';
import { privacyCommands } from './commands/privacy/commands.js';
import { argKey, type ArgSpec, type CommandSpec, type FlagSpec } from './commands/spec.js';
import {
  affinityCommand,
  doctorCommand,
  feedbackCommand,
  routeCommand,
  scoreCommand,
  whisperCommand,
} from './commands/top-level.js';
import { trainCommands } from './commands/train/commands.js';
import type { Command as KouraiCommand } from './commands/types.js';
import type { Ctx } from './context.js';
import { UsageError } from './errors.js';
import { helpFooter } from './help.js';
import type { CompletionNode } from './output/completion.js';
import { runCommand } from './run-command.js';

/**
 * The commander tree, built from the groups' declarations (commands/<group>/commands.ts). Actions
 * lazy-import their command module, so `kourai --help` and `--version` load neither Ink, React,
 * SQLite, zod nor the server.
 */
const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
export const KOURAI_VERSION = pkg.version;
/**
 * `-V, --version` is answered by main.ts only as the first argument: a root option would be
 * recognised after a command too and swallow that command's own `--version <n>`.
 */
export const isVersionRequest = (args: readonly string[]): boolean => args[0] === '--version' || args[0] === '-V';
const versionOption = new Option('-V, --version', 'output the version number');

type MakeCtx = (globals: { noInput: boolean; noColor: boolean; quiet: boolean }) => Ctx;

/** The commands, in the order `kourai --help` lists them; each group declares its own (commands/spec.ts). */
const COMMANDS: readonly CommandSpec[] = [
  memoirCommands,
  feedbackCommand,
  affinityCommand,
  privacyCommands,
  whisperCommand,
  federateCommands,
  councilCommands,
  trainCommands,
  adaptersCommands,
  scoreCommand,
  routeCommand,
  doctorCommand,
];

export function buildCli(
  makeCtx: MakeCtx,
  setExitCode: (code: number) => void,
  runner: typeof runCommand = runCommand,
  onCommand?: (cmd: KouraiCommand<never, unknown>) => void,
): Command {
  const program = new Command('kourai')
    .description('Operate a Kourai forge: the Forge Memoir, feedback, privacy (the Whisper Limit) and the council.')
    .option('--no-color', 'disable colour (also NO_COLOR=1)')
    .option('--no-input', 'never prompt; fail and name the flags to pass instead')
    .option('-q, --quiet', 'no progress or notes on stderr (warnings and errors still print)');
  // Commander's own errors are reported by main.ts like every other error (see usageErrors).
  program.configureOutput({ outputError: () => undefined });

  const run = async (load: () => Promise<unknown>, raw: Record<string, unknown>, cmd: Command): Promise<void> => {
    const opts = cmd.optsWithGlobals<Record<string, unknown>>();
    const ctx = makeCtx({ noInput: opts.input === false, noColor: opts.color === false, quiet: opts.quiet === true });
    setExitCode(await runner(load as never, { ...opts, ...raw }, ctx, onCommand as never));
  };
  const add = (parent: Command, spec: CommandSpec): void => {
    const c = parent.command(spec.name).description(spec.description);
    for (const a of spec.args ?? []) c.addArgument(argument(a));
    for (const f of spec.flags ?? []) c.addOption(option(f));
    for (const sub of spec.commands ?? []) add(c, sub);
    const load = spec.load;
    if (load === undefined) return;
    const keys = (spec.args ?? []).map(argKey);
    c.action(async (...args: unknown[]) => {
      const positional: Record<string, unknown> = {};
      keys.forEach((key, i) => {
        if (args[i] !== undefined) positional[key] = args[i];
      });
      await run(load, positional, args[args.length - 1] as Command);
    });
  };
  for (const spec of COMMANDS) add(program, spec);

  program
    .command('completion')
    .description('print a shell completion script (commands, options and their choices)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .option('--json', 'JSON output: {"shell", "script"}')
    .action(async (shell: string, _opts: unknown, cmd: Command) => {
      await run(() => import('./commands/completion.js'), { shell, tree: describeTree(program) }, cmd);
    });

  // `kourai help council serve` is the help of `council serve` (commander's own help command
  // only looks one level down).
  program.helpCommand(false);
  program
    .command('help')
    .description('help for a command, e.g. kourai help council serve')
    .argument('[command...]', 'the command')
    .action((names: string[]) => {
      let target: Command = program;
      for (const n of names) {
        const next = target.commands.find((c) => c.name() === n || c.aliases().includes(n));
        if (!next) throw new UsageError(`unknown command "${names.join(' ')}"`, 'see `kourai --help`');
        target = next;
      }
      target.outputHelp();
    });

  helpText(program);
  usageErrors(program);
  return program;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function option(f: FlagSpec): Option {
  const o = new Option(f.flags, f.help);
  if (f.choices) o.choices(f.choices);
  if (f.repeat === true) o.default([]).argParser(collect);
  if (f.default !== undefined) o.default(f.default);
  if (f.required === true) o.makeOptionMandatory();
  return o;
}

function argument(a: ArgSpec): Argument {
  const arg = new Argument(a.name, a.help);
  if (a.choices) arg.choices(a.choices);
  return arg;
}

/**
 * Every help ends with examples, exit codes and (for a screen) its keys (src/help.ts); a default
 * is shown once, as typed (`(default: 4)`), and never as an empty list.
 */
function helpText(root: Command): void {
  const visit = (c: Command): void => {
    const path = commandPath(c).replace(/^kourai ?/, '');
    c.configureHelp({
      optionDescription: optionDescription,
      sortSubcommands: false,
      visibleOptions: (cmd: Command) =>
        cmd === root ? [versionOption, ...new Help().visibleOptions(cmd)] : new Help().visibleOptions(cmd),
    });
    c.addHelpText(
      'after',
      () =>
        `${helpFooter(
          path,
          c.commands.map((x) => x.name()).filter((n) => n !== 'help'),
        )}\n`,
    );
    c.commands.forEach(visit);
  };
  visit(root);
}

function optionDescription(option: Option): string {
  const base = new Help().optionDescription(
    Object.assign(Object.create(Object.getPrototypeOf(option) as object) as Option, option, {
      defaultValue: undefined,
    }),
  );
  const d: unknown = option.defaultValue;
  const shown =
    (typeof d === 'string' || typeof d === 'number') && !/\(default\b|default:/.test(option.description)
      ? String(d)
      : undefined;
  return shown === undefined ? base : `${base} (default: ${shown})`;
}

/** The tree as the completion scripts see it (src/output/completion.ts). */
function describeTree(c: Command): CompletionNode {
  return {
    name: c.name(),
    description: c.description(),
    options: [
      ...c.options.map((o) => ({
        flags: [o.short, o.long].filter((f): f is string => typeof f === 'string'),
        description: o.description,
        takesValue: o.required || o.optional,
        ...(o.argChoices ? { choices: o.argChoices } : {}),
      })),
      { flags: ['-h', '--help'], description: 'display help', takesValue: false },
    ],
    commands: c.commands.filter((x) => x.name() !== 'help').map(describeTree),
  };
}

/**
 * Commander's errors (unknown option, missing argument, bad choice…) become kourai usage errors
 * (exit 2): one line on stderr after `kourai: `, the JSON error document under --json, and a
 * hint naming the help of the command that refused the input.
 */
function usageErrors(root: Command): void {
  const visit = (c: Command): void => {
    c.exitOverride((err: CommanderError) => {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help' ||
        err.exitCode === 0
      )
        throw err;
      // The root's -V/--version is listed in its help only (see isVersionRequest): never suggest it below the root.
      const message = err.message.replace(/^error: /, '').replace(/\s*\(Did you mean --version\?\)/, '');
      const versionAsked = c !== root && err.code === 'commander.unknownOption' && /'(--version|-V)'/.test(message);
      throw new UsageError(
        message,
        versionAsked
          ? 'the program version is `kourai --version` (first on the line)'
          : `see \`${commandPath(c)} --help\``,
      );
    });
    c.commands.forEach(visit);
  };
  visit(root);
}

function commandPath(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}
