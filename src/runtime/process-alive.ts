/**
 * Whether process `pid` still runs (signal 0 checks without sending anything): a leftover of a
 * writer that died can be removed; one of a live writer cannot. EPERM means it runs as another user.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
