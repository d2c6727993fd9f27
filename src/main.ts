import { buildCli, isVersionRequest, KOURAI_VERSION } from './cli.js';
import type { Command } from './commands/types.js';
import { processContext } from './context.js';
import { CancelledError, ExitCode, KouraiError } from './errors.js';
import { errorDocument } from './output/error-document.js';
import { terminalSafe } from './output/sanitize.js';

/**
 * How long a command has, after Ctrl-C, to stop by itself (long loops see ctx.signal within
 * 50 ms; see runtime/cancel.ts). A command still running after that is waiting on something
 * that ignores the signal: the process exits 130 anyway. Writes are synchronous (one append,
 * one transaction), so an exit between them leaves nothing half-written.
 */
const CANCEL_GRACE_MS = 1000;

/**
 * The only place that exits. Parses argv, runs the command, maps errors to exit codes:
 * a KouraiError prints one line (and its hint); anything else prints the stack and how to report it.
 */
export async function main(argv: readonly string[]): Promise<void> {
  if (isVersionRequest(argv.slice(2))) {
    process.stdout.write(`${KOURAI_VERSION}\n`);
    return;
  }
  const wantsJson = argv.includes('--json') || argv.includes('--ndjson');
  const controller = new AbortController();
  // A service (`council serve`) ends on a signal by design, and takes the time it needs to.
  let service = false;
  const onSignal = (): void => {
    if (controller.signal.aborted) process.exit(ExitCode.cancelled); // a second Ctrl-C: now
    controller.abort();
    if (!service) {
      setTimeout(() => {
        report(new CancelledError(), wantsJson);
        process.exit(ExitCode.cancelled);
      }, CANCEL_GRACE_MS).unref();
    }
  };
  process.on('SIGINT', onSignal);
  // SIGTERM (systemd, docker stop) stops work the same way.
  process.on('SIGTERM', onSignal);
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0); // `kourai … | head` is not a failure
  });
  let code: number = ExitCode.ok;
  try {
    const program = buildCli(
      (globals) => processContext({ ...globals, signal: controller.signal }),
      (c) => {
        code = c;
      },
      undefined,
      (cmd: Command<never, unknown>) => {
        service = cmd.service === true;
      },
    );
    await program.parseAsync([...argv]);
  } catch (err) {
    code = report(err, wantsJson);
  }
  process.exitCode = code;
  // Let stdout drain; Ink and servers close their own handles.
  if (code !== ExitCode.ok) setImmediate(() => process.exit(code));
}

/**
 * Every error a user sees starts with `kourai: `, on one line, with an optional `  hint: `
 * line; with --json (or --ndjson) the same error is also the JSON error document on stdout.
 */
function report(err: unknown, json: boolean): number {
  const cerr = err as { code?: string };
  if (
    typeof cerr?.code === 'string' &&
    (cerr.code === 'commander.helpDisplayed' || cerr.code === 'commander.version' || cerr.code === 'commander.help')
  )
    return ExitCode.ok;
  if (err instanceof KouraiError) {
    process.stderr.write(terminalSafe(`kourai: ${err.message}\n${err.hint ? `  hint: ${err.hint}\n` : ''}`, false));
    if (json) process.stdout.write(`${JSON.stringify(errorDocument(err))}\n`);
    return err.exitCode;
  }
  process.stderr.write(terminalSafe(`kourai: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`, false));
  process.stderr.write(
    '  hint: this is a bug in kourai: please report it with the command you ran and the output above\n',
  );
  if (json) process.stdout.write(`${JSON.stringify(errorDocument(err))}\n`);
  return ExitCode.failure;
}
