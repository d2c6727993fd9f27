import type { OutStream } from '../context.js';

export interface Progress {
  /** Advance to `done` of `total` units (bytes, entries…). */
  update(done: number): void;
  finish(message?: string): void;
}

/**
 * Progress on stderr: a redrawn bar with counts, rate and ETA on a TTY, a plain line every
 * few seconds otherwise. Silent when `quiet`.
 */
export function progress(
  err: OutStream,
  opts: { label: string; total: number; unit?: string; quiet?: boolean; now?: () => number; intervalMs?: number },
): Progress {
  const now = opts.now ?? (() => performance.now());
  const start = now();
  const tty = Boolean(err.isTTY);
  const interval = opts.intervalMs ?? (tty ? 100 : 5000);
  let last = start;
  let drawn = false;
  const unit = opts.unit ?? '';
  const fmt = (n: number): string =>
    unit === 'B'
      ? `${(n / 1048576).toFixed(1)} MiB`
      : `${Math.round(n).toLocaleString('en-US')}${unit ? ` ${unit}` : ''}`;
  const line = (done: number): string => {
    const elapsed = (now() - start) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const frac = opts.total > 0 ? Math.min(1, done / opts.total) : 0;
    const eta = rate > 0 && opts.total > 0 ? Math.max(0, (opts.total - done) / rate) : 0;
    const width = 24;
    const bar = tty ? `[${'█'.repeat(Math.round(frac * width)).padEnd(width, '░')}] ` : '';
    // A slow unit (a simulated forge-round takes seconds) keeps a decimal rather than showing 0/s.
    const rateText = unit !== 'B' && rate < 10 ? `${rate.toFixed(2)}${unit ? ` ${unit}` : ''}` : fmt(rate);
    return `${opts.label} ${bar}${(frac * 100).toFixed(0)}% ${fmt(done)}/${fmt(opts.total)} ${rateText}/s eta ${eta.toFixed(0)}s`;
  };
  return {
    update(done) {
      if (opts.quiet) return;
      const t = now();
      if (t - last < interval) return;
      last = t;
      if (tty) {
        err.write(`\r\u001b[2K${line(done)}`);
        drawn = true;
      } else {
        err.write(`${line(done)}\n`);
      }
    },
    finish(message) {
      if (opts.quiet) return;
      if (drawn) err.write('\r\u001b[2K');
      if (message) err.write(`${message}\n`);
    },
  };
}
