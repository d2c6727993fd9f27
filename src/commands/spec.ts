/**
 * The command registry's vocabulary: each command group declares its commands as data
 * (`<group>/commands.ts`), and src/cli.ts turns them into the commander tree. Declarations are
 * plain data, free of commander and zod, so `kourai --help` and the start-up path load neither
 * a command's code nor its validation; `load` imports the command only when it runs.
 */
import { flag, oneOf, optionalString, stringList, UNSURE, type Maybe } from './fast-flags.js';

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

export const JSON_FLAG = { flags: '--json', help: 'JSON output' } as const satisfies FlagSpec;

/** `--memoir PATH` (repeatable): memoir files or directories. */
export const memoirFlag = (help = 'memoir file or directory (repeatable; default: every memoir under $KOURAI_HOME)') =>
  ({ flags: '--memoir <path>', help, repeat: true }) as const satisfies FlagSpec;

export const AGENT_LIST_FLAG = {
  flags: '--agent <agent>',
  help: 'only this agent (repeatable)',
  repeat: true,
} as const satisfies FlagSpec;

/** The entry filters (commands/options.ts `filterShape` validates them). */
export const FILTER_FLAGS = [
  AGENT_LIST_FLAG,
  { flags: '--source <source>', help: 'only this source (repeatable)', repeat: true },
  { flags: '--type <type>', help: 'only this entry type (repeatable)', repeat: true },
  { flags: '--split <split>', help: 'shared or private, by the strict rule', choices: ['shared', 'private'] },
  { flags: '--scene <prefix>', help: 'scene id prefix, e.g. session-1a2b3c4d' },
  { flags: '--since <time>', help: 'recorded at or after (ISO date/time)' },
  { flags: '--until <time>', help: 'recorded before (ISO date/time)' },
] as const satisfies readonly FlagSpec[];

/** The privacy settings a command may override (commands/options.ts `budgetFlags` validates them). */
export const BUDGET_FLAGS = [
  { flags: '--forge-epsilon <ε>', help: "the forge's lifetime ε budget (default 8)" },
  { flags: '--agent-epsilon <ε>', help: "each agent's lifetime ε budget (default 8)" },
  { flags: '--delta <δ>', help: 'δ of every ε (default 1e-5)' },
  { flags: '--noise-multiplier <σ>', help: 'noise standard deviation as a multiple of the clip norm (default 8)' },
  { flags: '--clip-norm <S>', help: 'L2 norm every released delta is clipped to (default 1)' },
] as const satisfies readonly FlagSpec[];

// --- the values a command receives, derived from its declaration (no zod here: see spec-schema.ts)

type Camel<S extends string> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<Camel<B>>}` : S;
type LongName<F extends string> = F extends `${string}--${infer R}`
  ? R extends `${infer N} ${string}`
    ? N
    : R
  : never;
/** The key commander stores a flag under: `--all-revisions` is allRevisions, `--no-fsync` is fsync. */
export type FlagKey<F extends string> = LongName<F> extends `no-${infer P}` ? Camel<P> : Camel<LongName<F>>;
type Given<F> = F extends { readonly default: string } | { readonly required: true } ? never : undefined;
/** What a flag holds when no validation narrows it: a list, one of its choices, a string or a switch. */
export type FlagValue<F extends FlagSpec> = F extends { readonly repeat: true }
  ? string[]
  : F extends { readonly choices: readonly (infer C)[] }
    ? C | Given<F>
    : F['flags'] extends `${string}<${string}`
      ? string | Given<F>
      : boolean;
type ArgKey<N extends string> = N extends `${'<' | '['}${infer K}${'...>' | '...]'}`
  ? K
  : N extends `${'<' | '['}${infer K}${'>' | ']'}`
    ? K
    : never;
type ArgValue<N extends string> = N extends `${string}...${string}`
  ? string[]
  : N extends `<${string}`
    ? string
    : string | undefined;
type FlagsOf<C> = C extends { readonly flags: readonly (infer F)[] } ? F : never;
type ArgsOf<C> = C extends { readonly args: readonly (infer A)[] } ? A : never;
/** Every option a command receives, by key, as its declaration alone types it. */
export type SpecValues<C extends CommandSpec> = {
  [F in FlagsOf<C> as F extends FlagSpec ? FlagKey<F['flags']> : never]: F extends FlagSpec ? FlagValue<F> : never;
} & {
  [A in ArgsOf<C> as A extends ArgSpec ? ArgKey<A['name']> : never]: A extends ArgSpec ? ArgValue<A['name']> : never;
};

/** The runtime twin of FlagKey. */
export function flagKey(flags: string): string {
  const long = /--([^\s,]+)/.exec(flags)?.[1] ?? '';
  return long.replace(/^no-/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** How a flag or argument is read without validation beyond its declaration. */
export type Kind =
  | { kind: 'list' }
  | { kind: 'choice'; choices: readonly string[]; default?: string; required: boolean }
  | { kind: 'string'; default?: string; required: boolean }
  | { kind: 'switch'; default: boolean }
  | { kind: 'arg'; required: boolean }
  | { kind: 'args' };

/** Every key a command receives and how its declaration reads it (flags, then positional arguments). */
export function kindsOf(spec: CommandSpec): [string, Kind][] {
  const flags = (spec.flags ?? []).map((f): [string, Kind] => {
    const base = { required: f.required === true, ...(f.default !== undefined ? { default: f.default } : {}) };
    if (f.repeat === true) return [flagKey(f.flags), { kind: 'list' }];
    if (f.choices) return [flagKey(f.flags), { kind: 'choice', choices: f.choices, ...base }];
    if (f.flags.includes('<')) return [flagKey(f.flags), { kind: 'string', ...base }];
    return [flagKey(f.flags), { kind: 'switch', default: /(^|\s)--no-/.test(f.flags) }];
  });
  const args = (spec.args ?? []).map((a): [string, Kind] =>
    a.name.includes('...')
      ? [argKey(a), { kind: 'args' }]
      : [argKey(a), { kind: 'arg', required: a.name.startsWith('<') }],
  );
  return [...flags, ...args];
}

/** A fast reader of one key: its value, or UNSURE to leave the whole command line to the zod schema. */
export type FastReader<T> = (v: unknown) => Maybe<T>;
export type FastReaders<C extends CommandSpec> = { [K in keyof SpecValues<C>]?: FastReader<unknown> };
type Read<C extends CommandSpec, R> = {
  [K in keyof SpecValues<C>]: K extends keyof R ? (R[K] extends FastReader<infer T> ? T : never) : SpecValues<C>[K];
};

function readKind(k: Kind, v: unknown): unknown {
  switch (k.kind) {
    case 'list':
    case 'args':
      return stringList(v);
    case 'choice':
      return v === undefined && k.required ? UNSURE : oneOf(v, k.choices, k.default);
    case 'string':
      if (v === undefined) return k.required ? UNSURE : k.default;
      return typeof v === 'string' ? v : UNSURE;
    case 'switch':
      return flag(v, k.default);
    case 'arg':
      return v === undefined && k.required ? UNSURE : optionalString(v);
  }
}

/**
 * A command's options read without zod, for a command on the start-up path (LazyOptions in
 * types.ts): each key as its declaration reads it, or as `own` reads it where the schema of record
 * validates more. Undefined when any value is UNSURE: then the zod schema decides and words the error.
 */
export function fastOptions<C extends CommandSpec, R extends FastReaders<C>>(
  spec: C,
  own: R,
): (raw: Readonly<Record<string, unknown>>) => Read<C, R> | undefined {
  const kinds = kindsOf(spec);
  const readers = own as Record<string, FastReader<unknown> | undefined>;
  return (raw) => {
    const out: Record<string, unknown> = {};
    for (const [key, k] of kinds) {
      const reader = readers[key];
      const v = reader ? reader(raw[key]) : readKind(k, raw[key]);
      if (v === UNSURE) return undefined;
      out[key] = v;
    }
    return out as Read<C, R>;
  };
}
