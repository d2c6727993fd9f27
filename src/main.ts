import { buildCli } from './cli.js';
import { processContext } from './context.js';
import { ExitCode, KouraiError } from './errors.js';

/**
 * The only place that exits. Parses argv, runs the command, maps errors to exit codes:
 * a KouraiError prints one line (and its hint); anything else prints the stack and how to report it.
 */
export async function main(argv: readonly string[]): Promise<void> {
  const controller = new AbortController();
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(ExitCode.cancelled);
    controller.abort();
  });
  // Long-running commands (`council serve`) stop gracefully on SIGTERM too (systemd, docker stop).
  process.on('SIGTERM', () => {
    if (controller.signal.aborted) process.exit(ExitCode.cancelled);
    controller.abort();
  });
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0); // `kourai … | head` is not a failure
  });
  const wantsJson = argv.includes('--json');
  let code: number = ExitCode.ok;
  try {
    const program = buildCli((globals) => processContext({ ...globals, signal: controller.signal }), (c) => {
      code = c;
    });
    await program.parseAsync([...argv]);
  } catch (err) {
    code = report(err, wantsJson);
  }
  process.exitCode = code;
  // Let stdout drain; Ink and servers close their own handles.
  if (code !== ExitCode.ok) setImmediate(() => process.exit(code));
}

function report(err: unknown, json: boolean): number {
  if (err instanceof KouraiError) {
    process.stderr.write(`kourai: ${err.message}\n`);
    if (err.hint) process.stderr.write(`  hint: ${err.hint}\n`);
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: err.code, message: err.message, hint: err.hint ?? null, exit_code: err.exitCode } })}\n`);
    return err.exitCode;
  }
  const cerr = err as { code?: string; exitCode?: number; message?: string };
  if (typeof cerr?.code === 'string' && cerr.code.startsWith('commander.')) {
    if (cerr.code === 'commander.helpDisplayed' || cerr.code === 'commander.version' || cerr.code === 'commander.help') return ExitCode.ok;
    return ExitCode.usage; // commander already printed the message
  }
  process.stderr.write(`kourai: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  process.stderr.write('  this is a bug in kourai: please report it with the command you ran and the output above\n');
  return ExitCode.failure;
}
