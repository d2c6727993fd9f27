import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COUNCIL_RELEASE_FORMAT } from '../privacy/release.js';
import { PROTOCOL_VERSION } from '../protocol/wire.js';
import { PUBLIC_INIT_SCHEME } from '../protocol/public-init.js';
import { BUILTIN_FINGERPRINT } from '../train/fingerprint.js';

/**
 * What defines a simulated run besides its configuration: finished cells are reused only under the
 * same experiment id, and the id digests this too (experiment.ts), so a cache made by other code can
 * never be hit — nothing is bumped by hand. `code` is a digest of the modules a cell can execute
 * (aggregation, trainer, council, privacy, federation, memoir, tensor, simulation …): every source
 * file of this kourai but presentation (commands, screens, output, the HTML report), so any change to
 * them starts the cells afresh (the old ones stay in their own directory). The named versions say
 * which of the wire's or the base's meanings changed, for a reader of the id's inputs.
 */
export interface RunDefinition {
  protocol: number;
  release_format: string;
  public_init: string;
  /** The simulation always runs the built-in base (run.ts `sharedModel`). */
  base: string;
  code: string;
  /** V8's version: Math.exp/tanh/pow are V8's own, and may round differently in another one. */
  v8: string;
}

/** Directories (relative to the source root) whose code never shapes a cell's numbers. */
const PRESENTATION = new Set(['commands', 'ui', 'output', 'simulation/report']);

/**
 * sha256 over the files under `root` ending in `ext` (not .d.ts, not under PRESENTATION), in path
 * order, each as its relative path, its length and its bytes. About 1 MB of code: a few ms.
 */
export function codeDigest(root: string, ext: string): string {
  const files: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!PRESENTATION.has(p)) walk(p);
      } else if (e.isFile() && e.name.endsWith(ext) && !e.name.endsWith('.d.ts')) files.push(p);
    }
  };
  walk('');
  files.sort();
  const h = createHash('sha256');
  for (const p of files) {
    const bytes = readFileSync(join(root, p));
    h.update(`${p}\0${bytes.length}\0`).update(bytes);
  }
  return h.digest('hex');
}

/** This kourai's run definition (its code: the built tree it runs from, or the sources under vitest). */
export function runDefinition(): RunDefinition {
  const here = import.meta.url;
  const root = fileURLToPath(new URL('..', here));
  return {
    protocol: PROTOCOL_VERSION,
    release_format: COUNCIL_RELEASE_FORMAT,
    public_init: PUBLIC_INIT_SCHEME,
    base: BUILTIN_FINGERPRINT,
    code: codeDigest(root, here.endsWith('.ts') ? '.ts' : '.js'),
    v8: process.versions.v8,
  };
}
