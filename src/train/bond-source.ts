import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { kouraiHome, type Ctx } from '../context.js';
import type { Agent } from '../memoir/format/agents.js';
import { bondView } from './examples/views.js';
import type { BondData } from './train-bond.js';
import { limitPageCache, openIndexed, type IndexFeedback } from '../memoir-index/indexed.js';

/** SQLite page cache while the views read the index (KiB). */
const TRAINING_CACHE_KB = 8192;

/**
 * The bond data of a forge: the memoirs (`--memoir` or every memoir under the home), the index
 * brought up to date, and per agent the bond view (learndata's `bondView`: newest revisions,
 * private entries included, the replay buffer — a strict bound — bounding memory). The data window recorded with a
 * version is the memoirs and their sizes at training time.
 */
export interface BondSource {
  memoirs: string[];
  data(agent: Agent): BondData;
  close(): void;
}

/**
 * Brings the index up to date the one way every command does (openIndexed), so `feedback` hears
 * what any reading command says: progress, waiting for another builder, integrity events, lines
 * that are not valid entries and torn final fragments (both skipped).
 */
export async function openBondSource(o: {
  ctx: Pick<Ctx, 'env' | 'cwd' | 'now' | 'signal'>;
  memoirs: readonly string[];
  bound?: number;
  feedback?: IndexFeedback;
}): Promise<BondSource> {
  const home = kouraiHome(o.ctx);
  const {
    index,
    paths,
    fileIds: files,
  } = await openIndexed(o.ctx, o.memoirs, {
    ...(o.feedback ? { feedback: o.feedback } : {}),
  });
  try {
    const sizes = paths.map((p) => statSync(p).size);
    // The views stream the index once per agent: a page cache the size of the index (it allows
    // 64 MB, for building it) would make memory follow the memoir, not the buffer.
    limitPageCache(index, TRAINING_CACHE_KB);
    const window = { memoirs: paths.map((p, i) => ({ path: relative(home, p), bytes: sizes[i] ?? 0 })) };
    return {
      memoirs: paths,
      data: (agent) => {
        const view = bondView({ index, files }, agent, {
          signal: o.ctx.signal,
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
