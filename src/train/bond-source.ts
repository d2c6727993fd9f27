import { statSync } from 'node:fs';
import { relative } from 'node:path';
import type { Agent } from '../memoir/format/agents.js';
import { resolveMemoirs } from '../memoir/file/discover.js';
import { openIndex } from '../memoir-index/memoir-index.js';
import { bondView } from './examples/views.js';
import type { BondData } from './train-bond.js';
import { limitPageCache, type IndexFeedback } from '../memoir-index/indexed.js';
import { MemoirQueries } from '../memoir-index/memoir-queries.js';

/**
 * The bond data of a forge: the memoirs (`--memoir` or every memoir under the home), the index
 * brought up to date, and per agent the bond view (learndata's `bondView`: newest revisions,
 * private entries included, the replay buffer — a strict bound — bounding memory). The data window recorded with a
 * version is the memoirs and their sizes at training time.
 */
/** SQLite page cache while the views read the index (KiB). */
const TRAINING_CACHE_KB = 8192;

export interface BondSource {
  memoirs: string[];
  data(agent: Agent): BondData;
  close(): void;
}

/** `feedback`: told of lines that are not valid entries and of torn final fragments (both skipped). */
export function openBondSource(o: {
  home: string;
  cwd: string;
  memoirs: readonly string[];
  now: () => Date;
  signal: AbortSignal;
  bound?: number;
  onIndexProgress?: (bytes: number, total: number) => void;
  feedback?: Pick<IndexFeedback, 'skipped' | 'torn'>;
}): BondSource {
  const paths = resolveMemoirs(o.memoirs, o.home, o.cwd);
  const index = openIndex(o.home);
  try {
    const sizes = paths.map((p) => statSync(p).size);
    const total = sizes.reduce((a, b) => a + b, 0);
    let before = 0;
    const files: number[] = [];
    paths.forEach((p, i) => {
      const [u] = index.update([p], { now: o.now, onProgress: (b) => o.onIndexProgress?.(before + b, total) });
      if (u) files.push(u.fileId);
      if (u && u.tornTailBytes > 0) o.feedback?.torn?.(u.path, u.tornTailBytes);
      before += sizes[i] ?? 0;
    });
    const invalidLines = new MemoirQueries(index).invalidLines(files);
    if (invalidLines > 0) o.feedback?.skipped?.(invalidLines, files.length);
    // The views stream the index once per agent: a page cache the size of the index (it allows
    // 64 MB, for building it) would make memory follow the memoir, not the buffer.
    limitPageCache(index, TRAINING_CACHE_KB);
    const window = { memoirs: paths.map((p, i) => ({ path: relative(o.home, p), bytes: sizes[i] ?? 0 })) };
    return {
      memoirs: paths,
      data: (agent) => {
        const view = bondView({ index, files }, agent, {
          signal: o.signal,
          strictBound: true,
          ...(o.bound !== undefined ? { bound: o.bound } : {}),
        });
        const scenes = new Set(view.examples.map((e) => e.scene)).size;
        return {
          examples: view.examples,
          skipped: view.skipped,
          window: { ...window, examples: view.examples.length, scenes },
        };
      },
      close: () => index.close(),
    };
  } catch (err) {
    index.close();
    throw err;
  }
}
