import type { Ctx } from '../context.js';
import { count } from '../format.js';
import type { IndexFeedback } from '../memoir-index/indexed.js';
import { note, warn } from './notice.js';
import { progress, type Progress } from './progress.js';

/**
 * What the operator sees on stderr while a command brings the memoir index up to date: a
 * progress bar (not with `quiet`: --json runs and screens), a warning per file that changed
 * other than by an append, and how many lines were skipped because they are not valid entries
 * and a torn final fragment (always: a reader must never mistake "0 entries" for an empty memoir).
 */
export function indexFeedback(ctx: Pick<Ctx, 'stderr' | 'colorLevel' | 'quiet'>, quiet: boolean): IndexFeedback {
  let bar: Progress | undefined;
  let label = '';
  return {
    progress(done, total, what = 'indexing') {
      if (bar && label !== what) bar.finish();
      if (!bar || label !== what)
        bar = progress(ctx.stderr, { label: what, total, unit: 'B', quiet: quiet || ctx.quiet === true });
      label = what;
      bar.update(done);
    },
    finish() {
      bar?.finish();
    },
    waiting(text) {
      if (ctx.quiet !== true) note(ctx, text);
    },
    note(text) {
      if (!quiet) note(ctx, text);
    },
    integrity(u) {
      if (!quiet)
        warn(
          ctx,
          `${u.path}: ${u.integrity ?? 'changed'}; the index was rebuilt for it (see \`kourai memoir verify\`)`,
        );
    },
    torn(path, bytes) {
      // The wording and the fix of `memoir verify`'s torn_tail.
      warn(
        ctx,
        `${path}: torn final fragment of ${count(bytes, 'byte')} (a write that never finished) was not read  (fix: kourai memoir repair --memoir ${path})`,
      );
    },
    skipped(invalid, memoirs) {
      warn(
        ctx,
        `${count(invalid, 'line')} of ${count(memoirs, 'memoir')} ${invalid === 1 ? 'is' : 'are'} not a valid entry and ${invalid === 1 ? 'was' : 'were'} skipped; see \`kourai memoir verify\``,
      );
    },
  };
}
