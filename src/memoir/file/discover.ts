import { readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { EnvironmentError, NotFoundError, UsageError } from '../../errors.js';

/**
 * Memoir discovery. A forge's memoirs live at
 *   $KOURAI_HOME/projects/<player>/<project>/.kourai/forges/<session_id>/memoir.jsonl
 * `--memoir PATH` takes a file, or a directory searched recursively for `memoir.jsonl`.
 */
export const MEMOIR_FILE = 'memoir.jsonl';

/**
 * The one memoir a writing command acts on — the one rule for "a memoir file or its directory":
 * `--memoir FILE`, or `--memoir DIR` meaning DIR/memoir.jsonl. Exactly one `--memoir` (the usage
 * errors name the command and what the memoir is for). With `mustExist` the memoir must already be
 * there (feedback answers a scene in it); otherwise a missing file is created by the writer.
 */
export function oneMemoir(
  memoir: readonly string[],
  cwd: string,
  opts: { command: string; needs: string; mustExist: boolean },
): string {
  if (memoir.length !== 1) {
    throw new UsageError(
      memoir.length === 0
        ? `${opts.command} needs --memoir PATH${opts.needs}`
        : `${opts.command} takes exactly one --memoir`,
      'e.g. --memoir ~/.kourai_khryseai/projects/<player>/<project>/.kourai/forges/<session>/memoir.jsonl',
    );
  }
  const given = memoir[0] as string;
  const p = resolve(cwd, given);
  let isDir = false;
  try {
    isDir = statSync(p).isDirectory();
  } catch {
    if (opts.mustExist)
      throw new NotFoundError(
        `--memoir ${given}: no such memoir (${p})`,
        'create the sample forge with `kourai memoir synth`, or pass an existing memoir',
      );
    return p; // does not exist yet: the writer creates it
  }
  if (!isDir) return p;
  const inner = join(p, MEMOIR_FILE);
  if (opts.mustExist) {
    let ok = false;
    try {
      ok = statSync(inner).isFile();
    } catch {
      // reported below
    }
    if (!ok)
      throw new NotFoundError(
        `--memoir ${given}: no ${MEMOIR_FILE} in this directory`,
        'pass the session’s memoir.jsonl (one session, not a whole forge)',
      );
  }
  return inner;
}

export interface MemoirLocation {
  path: string;
  player?: string;
  project?: string;
  session?: string;
}

export function memoirPathFor(home: string, player: string, project: string, session: string): string {
  return join(home, 'projects', player, project, '.kourai', 'forges', session, MEMOIR_FILE);
}

export function describeLocation(path: string): MemoirLocation {
  const parts = resolve(path).split(sep);
  const i = parts.lastIndexOf('forges');
  if (i >= 3 && parts[i - 1] === '.kourai' && parts[i - 4] === 'projects' && basename(path) === MEMOIR_FILE) {
    return { path, player: parts[i - 3], project: parts[i - 2], session: parts[i + 1] };
  }
  return { path, session: basename(dirname(path)) };
}

/**
 * Finds every memoir.jsonl under `dir`. Symlinks are followed, to memoirs and to directories, as
 * reads may follow them (writes never do: see durable.ts); a directory reached twice (a link
 * cycle, or a link to a directory already walked) is walked once.
 */
function walk(dir: string, out: string[], depth: number, seenDirs = new Set<string>()): void {
  if (depth > 12) return;
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return;
  }
  if (seenDirs.has(real)) return;
  seenDirs.add(real);
  let names: Dirent[];
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directories are reported by `doctor`, not here
  }
  for (const d of names) {
    let isDir = d.isDirectory();
    let isFile = d.isFile();
    if (d.isSymbolicLink()) {
      try {
        const st = statSync(join(dir, d.name));
        isDir = st.isDirectory();
        isFile = st.isFile();
      } catch {
        continue; // a dangling link
      }
    }
    if (isDir) {
      if (d.name === 'node_modules' || d.name === '.git') continue;
      walk(join(dir, d.name), out, depth + 1, seenDirs);
    } else if (isFile && d.name === MEMOIR_FILE) {
      out.push(join(dir, d.name));
    }
  }
}

/** One path per file: a memoir reached through a symlink and directly is the same memoir (the first path wins). */
function uniqueFiles(paths: readonly string[]): string[] {
  const byReal = new Map<string, string>();
  for (const p of paths) {
    let real = p;
    try {
      real = realpathSync(p);
    } catch {
      // vanished: keep the path as given
    }
    if (!byReal.has(real)) byReal.set(real, p);
  }
  return [...byReal.values()];
}

/** Every memoir under KOURAI_HOME/projects, sorted by path. */
export function discoverMemoirs(home: string): string[] {
  const out: string[] = [];
  walk(join(home, 'projects'), out, 0);
  return uniqueFiles(out.sort());
}

/** Resolves `--memoir` values (files or directories) or, when none, everything under home. */
export function resolveMemoirs(paths: readonly string[] | undefined, home: string, cwd: string): string[] {
  if (!paths || paths.length === 0) {
    const found = discoverMemoirs(home);
    if (found.length === 0) {
      throw new NotFoundError(
        `no memoirs found under ${join(home, 'projects')}`,
        'pass --memoir PATH, or create the sample forge with `kourai memoir synth`',
      );
    }
    return found;
  }
  const out: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    let st;
    try {
      st = statSync(abs);
    } catch {
      throw new NotFoundError(`--memoir ${p}: no such file or directory (${abs})`);
    }
    if (st.isFile()) out.push(abs);
    else if (st.isDirectory()) {
      const found: string[] = [];
      walk(abs, found, 0);
      if (found.length === 0) throw new NotFoundError(`--memoir ${p}: no ${MEMOIR_FILE} under this directory`);
      out.push(...found.sort());
    } else throw new EnvironmentError(`--memoir ${p}: not a regular file or directory`);
  }
  return uniqueFiles(out);
}
