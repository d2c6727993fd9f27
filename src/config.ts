import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvironmentError, UsageError } from './errors.js';

/**
 * The forge's settings file, `$KOURAI_HOME/config.json`: one JSON object with a section per
 * concern (`privacy`, `feedback`, …). Each concern resolves its own keys with the house
 * precedence (defaults < this file < KOURAI_* environment < flags); reading the file is here.
 */
export function configFilePath(home: string): string {
  return join(home, 'config.json');
}

/** The named section of the config file: null without a file, {} without the section. */
export function readConfigSection(
  home: string,
  name: string,
): { path: string; section: Record<string, unknown> | null } {
  const path = configFilePath(home);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { path, section: null };
    throw new EnvironmentError(`cannot read the config file ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new EnvironmentError(
      `config file ${path} is not valid JSON: ${(err as Error).message.replace(/\s+/g, ' ')}`,
      'fix or remove the file',
    );
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new EnvironmentError(`config file ${path} must hold a JSON object`);
  const section = (doc as Record<string, unknown>)[name];
  if (section === undefined) return { path, section: {} };
  if (typeof section !== 'object' || section === null || Array.isArray(section))
    throw new EnvironmentError(`config file ${path}: "${name}" must be an object`);
  return { path, section: section as Record<string, unknown> };
}

/** Where a setting's value came from. */
export type Origin = 'default' | 'file' | 'env' | 'flag';

/** One setting of a config-file section: its names in the file, the environment and on the command line. */
export interface Setting<T> {
  file: string;
  env: string;
  flag: string;
  /** The value from a file (JSON) or environment (string) value, or why it is refused. */
  parse(raw: unknown, from: 'file' | 'env' | 'flag'): T | { invalid: string };
}

export type Values<S> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

const isInvalid = (v: unknown): v is { invalid: string } =>
  typeof v === 'object' && v !== null && 'invalid' in v && Object.keys(v).length === 1;

/**
 * The house precedence, in one place: defaults < `$KOURAI_HOME/config.json` (the named section)
 * < KOURAI_* environment < flags. A bad file or environment value is an environment error (exit 3)
 * naming the file key or the variable; a bad flag is a usage error (exit 2) naming the flag.
 * (The council keeps its own file, council.json, with the same order: src/council/config.ts.)
 */
export function resolveLayered<S extends Record<string, Setting<unknown>>>(p: {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  section: string;
  settings: S;
  defaults: Values<S>;
  flags?: Partial<Values<S>>;
}): { values: Values<S>; origin: Record<keyof S, Origin>; file: string | null } {
  const keys = Object.keys(p.settings) as (keyof S & string)[];
  const values = { ...p.defaults };
  const origin = Object.fromEntries(keys.map((k) => [k, 'default'])) as Record<keyof S, Origin>;
  const { path, section } = readConfigSection(p.home, p.section);
  const byFileKey = new Map(keys.map((k) => [p.settings[k]!.file, k]));
  const set = (
    k: keyof S & string,
    raw: unknown,
    from: Exclude<Origin, 'default'>,
    fail: (why: string) => Error,
  ): void => {
    const v = p.settings[k]!.parse(raw, from);
    if (isInvalid(v)) throw fail(v.invalid);
    (values as Record<string, unknown>)[k] = v;
    origin[k] = from;
  };
  for (const [fk, raw] of Object.entries(section ?? {})) {
    const k = byFileKey.get(fk);
    if (!k)
      throw new EnvironmentError(
        `config file ${path}: unknown key ${p.section}.${fk} (known: ${[...byFileKey.keys()].join(', ')})`,
      );
    set(
      k,
      raw,
      'file',
      (why) => new EnvironmentError(`config file ${path}: ${p.section}.${fk} = ${JSON.stringify(raw)}: ${why}`),
    );
  }
  for (const k of keys) {
    const name = p.settings[k]!.env;
    const raw = p.env[name]?.trim();
    if (raw) set(k, raw, 'env', (why) => new EnvironmentError(`${name}=${raw}: ${why}`));
  }
  for (const k of keys) {
    const raw = p.flags?.[k];
    if (raw !== undefined)
      set(k, raw, 'flag', (why) => new UsageError(`${p.settings[k]!.flag} ${String(raw)}: ${why}`));
  }
  return { values, origin, file: section === null ? null : path };
}
