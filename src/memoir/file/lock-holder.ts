import { readdirSync, readFileSync, type Stats } from 'node:fs';

/**
 * Who holds the lock on a file, for error messages only (Linux; undefined elsewhere or when it
 * cannot be told). `/proc/locks` names the pid of a POSIX lock (a Python host's `lockf`); an
 * open-file-description lock (kourai's) shows pid -1 there, so its holder is found by the
 * `lock:` line in `/proc/<pid>/fdinfo/<fd>`.
 */
export function describeHolder(st: Stats): string | undefined {
  const id = lockId(st);
  try {
    const locks = readFileSync('/proc/locks', 'utf8')
      .split('\n')
      .filter((l) => l.includes(` ${id} `));
    for (const l of locks) {
      const pid = Number(l.trim().split(/\s+/)[4]);
      if (pid > 0) return named(pid);
    }
    if (locks.length === 0) return undefined;
    let scanned = 0;
    for (const p of readdirSync('/proc')) {
      if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
      if (++scanned > 4000) break;
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${p}/fdinfo`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          if (readFileSync(`/proc/${p}/fdinfo/${fd}`, 'utf8').includes(` ${id} `)) return named(Number(p));
        } catch {
          // gone
        }
      }
    }
  } catch {
    // not Linux, or /proc is not readable
  }
  return undefined;
}

/** `/proc/locks` identifies a file as `MAJOR:MINOR:INODE` (major and minor in hex). */
function lockId(st: Stats): string {
  const dev = st.dev;
  const major = Math.floor(dev / 256) & 0xfff;
  const minor = (dev & 0xff) | (Math.floor(dev / 4096) & ~0xff);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${st.ino}`;
}

function named(pid: number): string {
  let comm = '';
  try {
    comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    // exited meanwhile
  }
  return `pid ${pid}${comm ? ` (${comm})` : ''}`;
}
