import { kouraiHome, type Ctx } from '../../context.js';
import { fingerprintDir, forgetFingerprint } from '../../memoir/verify/fingerprint.js';
import { fastOptions } from '../spec.js';
import { index as spec } from './commands.js';
import { defineCommand, type LazyOptions } from '../types.js';
import type { options as OptionsSchema } from './index-options.js';
import { openIndexed } from './shared.js';
import { count, seconds } from '../../format.js';

/** index-options.ts without zod (test/commands/fast-options.test.ts holds the two together). */
export const fastIndexOptions = fastOptions(spec, {});

const options: LazyOptions<typeof OptionsSchema> = {
  fast: fastIndexOptions,
  schema: async () => (await import('./index-options.js')).options,
};

export interface IndexResult {
  files: {
    path: string;
    new_entries: number;
    new_invalid_lines: number;
    bytes_read: number;
    integrity: string | null;
    torn_tail_bytes: number;
  }[];
  seconds: number;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<IndexResult> {
    const t0 = performance.now();
    const { index, updates } = await openIndexed(ctx, opts.memoir, {
      quiet: opts.json,
      rebuild: opts.rebuild,
      mustWrite: true,
      fullText: opts.fullText,
    });
    index.close();
    // A rebuild acknowledges a checked change: verify's memory of the old bytes goes with the index's.
    if (opts.rebuild) for (const u of updates) forgetFingerprint(fingerprintDir(kouraiHome(ctx)), u.path);
    return {
      files: updates.map((u) => ({
        path: u.path,
        new_entries: u.newEntries,
        new_invalid_lines: u.newProblems,
        bytes_read: u.bytesRead,
        integrity: u.integrity ?? null,
        torn_tail_bytes: u.tornTailBytes,
      })),
      seconds: (performance.now() - t0) / 1000,
    };
  },
  render(r) {
    const n = r.files.reduce((s, f) => s + f.new_entries, 0);
    return `indexed ${count(n, 'new entry', 'new entries')} from ${count(r.files.length, 'memoir')} in ${seconds(r.seconds)}`;
  },
});
