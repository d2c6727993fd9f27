// The parts of fs-native-extensions kourai uses (the package ships no types).
declare module 'fs-native-extensions' {
  /** Takes a lock without waiting; false when another open file description holds a conflicting one. */
  export function tryLock(fd: number, offset?: number, length?: number, opts?: { shared?: boolean }): boolean;
  export function unlock(fd: number, offset?: number, length?: number): void;
  const fsx: { tryLock: typeof tryLock; unlock: typeof unlock };
  export default fsx;
}
