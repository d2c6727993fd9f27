import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvironmentError } from './errors.js';

/**
 * The forge's settings file, `$KOURAI_HOME/config.json`: one JSON object with a section per
 * concern (`privacy`, `feedback`, …). Each concern resolves its own keys with the house
 * precedence (defaults < this file < KOURAI_* environment < flags); reading the file is here.
 */
export function configFilePath(home: string): string {
  return join(home, 'config.json');
}

/** The named section of the config file: null without a file, {} without the section. */
export function readConfigSection(home: string, name: string): { path: string; section: Record<string, unknown> | null } {
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
    throw new EnvironmentError(`config file ${path} is not valid JSON: ${(err as Error).message.replace(/\s+/g, ' ')}`, 'fix or remove the file');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new EnvironmentError(`config file ${path} must hold a JSON object`);
  const section = (doc as Record<string, unknown>)[name];
  if (section === undefined) return { path, section: {} };
  if (typeof section !== 'object' || section === null || Array.isArray(section)) throw new EnvironmentError(`config file ${path}: "${name}" must be an object`);
  return { path, section: section as Record<string, unknown> };
}
