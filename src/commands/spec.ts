/**
 * The command registry's vocabulary: each command group declares its commands as data
 * (`<group>/commands.ts`), and src/cli.ts turns them into the commander tree. Declarations are
 * plain data, free of commander and zod, so `kourai --help` and the start-up path load neither
 * a command's code nor its validation; `load` imports the command only when it runs.
 */

/** One flag, declared once: its commander option, its help and its completion come from here. */
export interface FlagSpec {
  /** commander syntax: `--limit <n>`, `-o, --out <file>`, `--no-fsync`. */
  readonly flags: string;
  readonly help: string;
  /** The only values accepted (commander refuses others before the command loads). */
  readonly choices?: readonly string[];
  /** Repeatable: every use adds to a list (absent: []). */
  readonly repeat?: boolean;
  /** A default, shown in the help as typed. */
  readonly default?: string;
  /** The flag must be given. */
  readonly required?: boolean;
}

/** A positional argument: `<id>` required, `[entry]` optional, `<query...>` variadic. */
export interface ArgSpec {
  readonly name: string;
  readonly help: string;
  readonly choices?: readonly string[];
}

/** A command (with `load`) or a group of commands (with `commands`). */
export interface CommandSpec {
  readonly name: string;
  readonly description: string;
  readonly args?: readonly ArgSpec[];
  readonly flags?: readonly FlagSpec[];
  readonly commands?: readonly CommandSpec[];
  /** Imports the command module (its default export is the command, see types.ts). */
  readonly load?: () => Promise<{ default: unknown }>;
}

/** The name of a positional argument as the command's options see it: `<query...>` is `query`. */
export const argKey = (a: ArgSpec): string => a.name.replace(/^[<[]|(\.\.\.)?[>\]]$/g, '');

// --- flags several groups share

export const JSON_FLAG: FlagSpec = { flags: '--json', help: 'JSON output' };

/** `--memoir PATH` (repeatable): memoir files or directories. */
export const memoirFlag = (
  help = 'memoir file or directory (repeatable; default: every memoir under $KOURAI_HOME)',
): FlagSpec => ({ flags: '--memoir <path>', help, repeat: true });

export const AGENT_LIST_FLAG: FlagSpec = {
  flags: '--agent <agent>',
  help: 'only this agent (repeatable)',
  repeat: true,
};

/** The entry filters (commands/options.ts `filterShape` validates them). */
export const FILTER_FLAGS: readonly FlagSpec[] = [
  AGENT_LIST_FLAG,
  { flags: '--source <source>', help: 'only this source (repeatable)', repeat: true },
  { flags: '--type <type>', help: 'only this entry type (repeatable)', repeat: true },
  { flags: '--split <split>', help: 'shared or private, by the strict rule', choices: ['shared', 'private'] },
  { flags: '--scene <prefix>', help: 'scene id prefix, e.g. session-1a2b3c4d' },
  { flags: '--since <time>', help: 'recorded at or after (ISO date/time)' },
  { flags: '--until <time>', help: 'recorded before (ISO date/time)' },
];

/** The privacy settings a command may override (commands/options.ts `budgetFlags` validates them). */
export const BUDGET_FLAGS: readonly FlagSpec[] = [
  { flags: '--forge-epsilon <ε>', help: "the forge's lifetime ε budget (default 8)" },
  { flags: '--agent-epsilon <ε>', help: "each agent's lifetime ε budget (default 8)" },
  { flags: '--delta <δ>', help: 'δ of every ε (default 1e-5)' },
  { flags: '--noise-multiplier <σ>', help: 'noise standard deviation as a multiple of the clip norm (default 8)' },
  { flags: '--clip-norm <S>', help: 'L2 norm every released delta is clipped to (default 1)' },
];
