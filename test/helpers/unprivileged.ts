import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT } from './bin.js';
import { tempDir } from './ctx.js';

/**
 * The built binary run as an unprivileged user, so file permissions apply to it as they do to an
 * operator. Root (CI runs as root) writes anywhere, so as root the command runs as `nobody` through
 * `setpriv`; anyone else is unprivileged already. Nothing here skips: when the set-up cannot be
 * made, it throws, naming what is missing, and the test fails.
 */
export interface Unprivileged {
  uid: number;
  gid: number;
  /** A directory the unprivileged user can reach (a home it owns is inside). */
  base: string;
  home: string;
  run(args: readonly string[], input?: string): { code: number; stdout: string; stderr: string };
  /** Runs `node -e script` as that user (for probing what it may do). */
  probe(script: string): { code: number; stderr: string };
}

const asRoot = process.getuid?.() === 0;

/** What the built binary needs at run time, relative to the checkout. */
const RUNTIME = ['package.json', 'bin', 'dist', 'node_modules'];
let reachable: string | undefined;

/**
 * The binary as `nobody` can run it: the checkout's own, or, when `nobody` cannot reach the
 * checkout (it sits in a 0700 directory, such as `mktemp -d` makes), a copy of the built runtime
 * in the temporary directory: hard links where the file system allows (fast; the files' own modes
 * already let others read them), a plain copy otherwise. Decided once per test process; the copy
 * is removed when the process exits. Not running as root, the checkout's own.
 */
export function unprivilegedBin(): string {
  if (!asRoot) return BIN;
  if (reachable) return reachable;
  const uid = idOf('-u', 'nobody');
  const gid = idOf('-g', 'nobody');
  const runs = (bin: string) =>
    spawnSync(process.execPath, [bin, '--version'], {
      cwd: '/',
      uid,
      gid,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    }).status === 0;
  if (runs(BIN)) return (reachable = BIN);
  const dir = tempDir('kourai-runtime-');
  chmodSync(join(dir, '..'), 0o711);
  chmodSync(dir, 0o755);
  for (const part of RUNTIME) {
    const from = join(ROOT, part);
    const linked = spawnSync('cp', ['-al', from, join(dir, part)]);
    if (linked.status !== 0 && spawnSync('cp', ['-a', from, join(dir, part)]).status !== 0)
      throw new Error(`cannot set up an unprivileged run: copying ${from} to ${dir} failed`);
  }
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  reachable = join(dir, 'bin', 'kourai.js');
  if (!runs(reachable))
    throw new Error(`cannot set up an unprivileged run: nobody cannot run ${BIN} nor its copy ${reachable}`);
  return reachable;
}

function idOf(flag: '-u' | '-g', user: string): number {
  const r = spawnSync('id', [flag, user], { encoding: 'utf8' });
  const n = Number(r.stdout.trim());
  if (r.status !== 0 || !Number.isInteger(n))
    throw new Error(`cannot set up an unprivileged run: \`id ${flag} ${user}\` failed (${r.stderr.trim()})`);
  return n;
}

export function unprivileged(): Unprivileged {
  const uid = asRoot ? idOf('-u', 'nobody') : (process.getuid?.() as number);
  const gid = asRoot ? idOf('-g', 'nobody') : (process.getgid?.() as number);
  if (asRoot && spawnSync('setpriv', ['--version']).status !== 0)
    throw new Error('cannot set up an unprivileged run: running as root and `setpriv` (util-linux) is missing');
  const base = tempDir('kourai-unpriv-');
  const home = join(base, 'home');
  mkdirSync(home);
  if (asRoot) {
    // nobody must reach `base`: traverse (not list) the per-run temporary root and `base` itself
    chmodSync(join(base, '..'), 0o711);
    chmodSync(base, 0o755);
    chownSync(home, uid, gid);
  }
  const bin = unprivilegedBin();
  const spawn = (argv: readonly string[], input: string) => {
    const cmd = asRoot ? 'setpriv' : (argv[0] as string);
    const args = asRoot
      ? ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--', ...argv]
      : argv.slice(1);
    const r = spawnSync(cmd, args, {
      cwd: home,
      input,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, KOURAI_HOME: home, NO_COLOR: '1', CI: '1' },
      timeout: 60_000,
    });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const u: Unprivileged = {
    uid,
    gid,
    base,
    home,
    run: (args, input = '') => spawn([process.execPath, bin, ...args], input),
    probe: (script) => spawn([process.execPath, '-e', script], ''),
  };
  const version = u.run(['--version']);
  if (version.code !== 0)
    throw new Error(`cannot set up an unprivileged run: uid ${uid} cannot run ${bin} (${version.stderr.trim()})`);
  return u;
}
