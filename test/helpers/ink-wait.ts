/**
 * Driving an Ink screen rendered by ink-testing-library without fixed pauses: every wait is for
 * something observable (a frame, a state, the screen listening for keys). A fixed pause is a bet
 * on the machine's speed, and the shared CI machine loses such bets.
 */

/** The part of ink-testing-library's stdin these helpers use. */
export interface InkStdin {
  write(s: string): void;
  listenerCount(event: string): number;
}

/** A bound on waits for liveness only (the test's own timeout is the real limit); never a measurement. */
const LIMIT_MS = 15_000;

/** Polls until `check` passes (Ink renders asynchronously), or fails naming `what` with the last frame. */
export async function waitFor(
  check: () => boolean,
  frame: () => string | undefined,
  what = 'the frame',
): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > LIMIT_MS)
      throw new Error(`gave up waiting for ${what}; last frame:\n${frame() ?? '(none)'}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits until a frame contains `text` (or matches it) and returns that frame. */
export async function frameWith(lastFrame: () => string | undefined, text: string | RegExp): Promise<string> {
  const has = (f: string): boolean => (typeof text === 'string' ? f.includes(text) : text.test(f));
  await waitFor(() => has(lastFrame() ?? ''), lastFrame, `a frame with ${String(text)}`);
  return lastFrame() ?? '';
}

/**
 * True once the screen listens for keys: Ink attaches its 'readable' listener when a `useInput`
 * becomes active. A key written before that is dropped by ink-testing-library's stdin.
 */
export function listening(stdin: InkStdin): boolean {
  return stdin.listenerCount('readable') > 0;
}

export const KEY = { up: '\u001B[A', down: '\u001B[B', enter: '\r', escape: '\u001B', space: ' ' } as const;

/**
 * Types keys one at a time, each only once the screen listens. After each key the event loop gets
 * one turn: Ink holds a lone Esc until its next `setImmediate` (it could start an escape sequence),
 * and a key written before that would be read as Alt+key.
 */
export async function press(stdin: InkStdin, ...keys: string[]): Promise<void> {
  for (const k of keys) {
    await waitFor(
      () => listening(stdin),
      () => undefined,
      'the screen to listen for keys',
    );
    stdin.write(k);
    await new Promise((r) => setImmediate(r));
  }
}
