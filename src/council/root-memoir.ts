import { statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { FEDERATING_AGENTS } from '../memoir/format/agents.js';
import { resolveMemoirs } from '../memoir/file/discover.js';
import { updateIndexed } from '../memoir-index/indexed.js';
import { openIndex } from '../memoir-index/memoir-index.js';
import type { Example } from '../train/examples/types.js';
import { councilView } from '../train/examples/views.js';
import { RootSet, rootSetBaseOk } from './root-set.js';

/** Root sets already read in this process, by their files' paths, sizes and times (a simulation starts many councils on one). */
const cache = new Map<string, RootSet>();

/**
 * The operator's root memoir (`root_memoir`: a memoir file, or a directory of them) read through
 * the council view — what a forge would share of it — into the council's root set. Its index
 * lives in `<data_dir>/root`. Throws a UsageError when it cannot be used.
 */
export function loadRootSet(c: {
  root_memoir: string | null;
  data_dir: string;
  base_fingerprints: readonly string[];
}): RootSet | null {
  if (c.root_memoir === null) return null;
  if (!rootSetBaseOk(c.base_fingerprints))
    throw new UsageError(
      `root_memoir: a root set is scored on the built-in base, and this council accepts ${c.base_fingerprints.length ? c.base_fingerprints.join(', ') : 'no base fingerprint'}`,
      'set base_fingerprints to the built-in base, or leave root_memoir unset',
    );
  let paths: string[];
  try {
    paths = resolveMemoirs([c.root_memoir], c.data_dir, process.cwd());
  } catch (err) {
    throw new UsageError(`root_memoir: ${(err as Error).message.replace(/^--memoir /, '')}`);
  }
  const key = JSON.stringify(
    paths.map((p) => {
      const st = statSync(p);
      return [p, st.size, st.mtimeMs];
    }),
  );
  const hit = cache.get(key);
  if (hit) return hit;
  const index = openIndex(join(c.data_dir, 'root'));
  const examples: Partial<Record<string, Example[]>> = {};
  try {
    const source = { index, files: updateIndexed(index, paths).fileIds };
    for (const agent of FEDERATING_AGENTS) examples[agent] = councilView(source, agent).examples as Example[];
  } finally {
    index.close();
  }
  const root = new RootSet(examples);
  if (FEDERATING_AGENTS.every((a) => root.size(a) === 0))
    throw new UsageError(
      `root_memoir ${c.root_memoir}: no entry in it is shareable with a council (its council view is empty)`,
    );
  if (cache.size >= 8) cache.clear();
  cache.set(key, root);
  return root;
}
