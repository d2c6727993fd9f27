import { render } from 'ink';
import type { ReactElement } from 'react';
import type { Ctx } from '../context.js';

/**
 * Runs one Ink screen on the command's streams until it finishes, and returns what it finished
 * with. The screen calls `finish(value)`; a closed stdin or Ctrl-C from outside (SIGINT, seen
 * as ctx.signal) finish it too. Ink never exits the process: main.ts does.
 */
export async function runScreen<T>(
  ctx: Ctx,
  build: (finish: (value: T) => void) => ReactElement,
  opts: { onStdinEnd: T; onAbort: T },
): Promise<T> {
  let result: { value: T } | undefined;
  let instance: ReturnType<typeof render> | undefined;
  const finish = (value: T): void => {
    if (result) return;
    result = { value };
    instance?.unmount();
  };
  const onEnd = (): void => finish(opts.onStdinEnd);
  const onAbort = (): void => finish(opts.onAbort);
  ctx.stdin.on('end', onEnd);
  ctx.stdin.on('close', onEnd);
  ctx.signal.addEventListener('abort', onAbort);
  try {
    instance = render(build(finish), {
      stdin: ctx.stdin as NodeJS.ReadStream,
      stdout: ctx.stdout as unknown as NodeJS.WriteStream,
      stderr: ctx.stderr as unknown as NodeJS.WriteStream,
      exitOnCtrlC: false,
      patchConsole: false,
    });
    if (result) instance.unmount();
    if (ctx.signal.aborted) finish(opts.onAbort);
    await instance.waitUntilExit();
  } finally {
    ctx.stdin.off('end', onEnd);
    ctx.stdin.off('close', onEnd);
    ctx.signal.removeEventListener('abort', onAbort);
  }
  return (result as { value: T } | undefined)?.value ?? opts.onAbort;
}
