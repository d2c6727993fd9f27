/** Polls until `check` passes (Ink renders asynchronously), or fails with the last frame. */
export async function waitFor(check: () => boolean, frame: () => string | undefined, timeoutMs = 3000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for the frame; last frame:\n${frame() ?? '(none)'}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const KEY = { up: '\u001B[A', down: '\u001B[B', enter: '\r', escape: '\u001B', space: ' ' } as const;

/** Ink attaches its input handler after the first frame and reads input on later ticks: pause around keys. */
export async function press(stdin: { write(s: string): void }, ...keys: string[]): Promise<void> {
  for (const k of keys) {
    await new Promise((r) => setTimeout(r, 20));
    stdin.write(k);
  }
  await new Promise((r) => setTimeout(r, 20));
}
