import { Worker } from 'node:worker_threads';

/**
 * Every worker thread of kourai starts here (lint forbids `new Worker` elsewhere), so the node
 * flags a worker gets are decided once.
 *
 * By default a worker inherits this process's flags (`process.execArgv`), and some of them make it
 * fail to start: `node --input-type=module -e …` passes `--input-type` and the `-e` code itself
 * on, and the worker dies with ERR_INPUT_TYPE_NOT_ALLOWED (an eval'd CommonJS worker: "require is
 * not defined in ES module scope"). Loaders and preloads (`--import`, `--require`, `--loader`)
 * would run again in every worker: our workers are built JavaScript and need none.
 *
 * Kept: only boolean flags that change how warnings and errors are reported, so that a user's
 * `--no-warnings` or `--enable-source-maps` holds in workers too. Flags that take a value are
 * never kept: given as two words (`--flag value`) they cannot be filtered safely.
 *
 * V8 flags such as `--max-old-space-size` or `--stack-size` need nothing here: they are
 * process-wide and apply to workers whether passed or not (measured on node 20: a worker of
 * `node --max-old-space-size=100` has the same 148 MB heap limit with `execArgv: []`).
 */
const KEPT_FLAGS: ReadonlySet<string> = new Set([
  '--enable-source-maps',
  '--no-warnings',
  '--no-deprecation',
  '--pending-deprecation',
  '--throw-deprecation',
  '--trace-deprecation',
  '--trace-warnings',
  '--trace-uncaught',
]);

/** The flags a worker started from a process with `parent` flags gets. */
export function workerExecArgv(parent: readonly string[] = process.execArgv): string[] {
  return parent.filter((a) => KEPT_FLAGS.has(a));
}

/** A worker's script: a built file (see worker-url.ts), or CommonJS source text run as-is. */
export type WorkerScript = URL | { source: string };

export interface StartOptions {
  workerData?: unknown;
}

/** Starts a worker thread with the flags of workerExecArgv(). */
export function startWorker(script: WorkerScript, opts: StartOptions = {}): Worker {
  const execArgv = workerExecArgv();
  if (script instanceof URL) return new Worker(script, { ...opts, execArgv });
  return new Worker(script.source, { ...opts, eval: true, execArgv });
}
