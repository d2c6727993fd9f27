import { accessSync, closeSync, constants, existsSync, openSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { kouraiHome, type Ctx } from '../context.js';
import { discoverMemoirs } from '../memoir/file/discover.js';
import { findTornTail } from '../memoir/file/quarantine.js';
import { colors } from '../output/color.js';
import { count } from '../format.js';
import { openIndexReadOnly } from '../memoir-index/indexed.js';
import { indexPath } from '../memoir-index/memoir-index.js';
import { MemoirQueries } from '../memoir-index/memoir-queries.js';
import { checkNode } from '../runtime/node-version.js';
import { openStateDbReadOnly, statePath } from '../store/state-db.js';
import { defineCommand } from './types.js';
import { optionsSchema } from './spec-schema.js';
import { doctorCommand as spec } from './top-level.js';

const options = optionsSchema(spec, {});

export interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix: string | null;
}

export interface DoctorResult {
  ok: boolean;
  home: string;
  checks: Check[];
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export default defineCommand({
  options,
  async run(_opts, ctx: Ctx): Promise<DoctorResult> {
    const checks: Check[] = [];
    const add = (name: string, status: Check['status'], detail: string, fix: string | null = null): void => {
      checks.push({ name, status, detail, fix });
    };
    const node = checkNode(process.versions.node);
    add('node', node.ok ? 'ok' : 'fail', node.detail, node.fix);
    const home = kouraiHome(ctx);
    if (!existsSync(home))
      add(
        'home',
        'warn',
        `${home} does not exist yet`,
        'kourai memoir synth   (creates the sample forge), or set KOURAI_HOME',
      );
    else if (!statSync(home).isDirectory())
      add('home', 'fail', `${home} is not a directory`, 'set KOURAI_HOME to a directory');
    else if (!writable(home)) add('home', 'fail', `${home} is not writable`, `chmod u+w ${home}`);
    else add('home', 'ok', home);
    const memoirs = existsSync(home) ? discoverMemoirs(home) : [];
    add(
      'memoirs',
      memoirs.length > 0 ? 'ok' : 'warn',
      `${memoirs.length} memoir${memoirs.length === 1 ? '' : 's'} under ${join(home, 'projects')}`,
      memoirs.length > 0 ? null : 'kourai memoir synth',
    );
    let torn = 0;
    let locks = 0;
    for (const m of memoirs) {
      try {
        const fd = openSync(m, 'r');
        try {
          if (findTornTail(fd)) torn++;
        } finally {
          closeSync(fd);
        }
      } catch {
        add('memoir', 'fail', `cannot read ${m}`, `chmod u+r ${m}`);
      }
      if (existsSync(`${m}.lock`)) locks++;
      if (!writable(dirname(m)))
        add('memoir', 'warn', `${dirname(m)} is not writable: appends will fail`, `chmod u+w ${dirname(m)}`);
    }
    add(
      'torn tails',
      torn ? 'fail' : 'ok',
      torn
        ? `${torn} memoir${torn === 1 ? '' : 's'} end with a torn fragment`
        : 'every memoir ends with a complete line',
      torn ? 'kourai memoir repair' : null,
    );
    if (locks)
      add(
        'locks',
        'warn',
        `${locks} memoir lock file${locks === 1 ? '' : 's'} present (a writer is running, or crashed)`,
        'wait for the writer; a lock of a dead process is taken over automatically',
      );
    const index = indexPath(home);
    if (!existsSync(index)) {
      add(
        'index',
        memoirs.length ? 'warn' : 'ok',
        `${index} not built yet`,
        memoirs.length ? 'kourai memoir index' : null,
      );
    } else {
      try {
        const idx = openIndexReadOnly(home);
        try {
          const q = idx ? new MemoirQueries(idx) : null;
          const files = q?.indexedFiles() ?? [];
          const known = new Map(files.map((f) => [f.path, f.indexed_bytes]));
          let stale = 0;
          let missing = 0;
          for (const m of memoirs) {
            const b = known.get(m);
            if (b === undefined) missing++;
            else if (statSync(m).size > b) stale++;
          }
          const events = q?.integrityEventCount() ?? 0;
          const gone = files.filter((f) => !existsSync(f.path)).length;
          add(
            'index',
            missing || stale ? 'warn' : 'ok',
            `${index}: ${count(files.length, 'file')} indexed, ${missing} not yet, ${stale} with new appends${gone ? `, ${gone} indexed files no longer exist` : ''}`,
            missing || stale ? 'kourai memoir index' : null,
          );
          add(
            'integrity',
            events ? 'fail' : 'ok',
            events ? `${count(events, 'non-append change')} recorded` : 'no non-append changes seen',
            events ? 'kourai memoir verify' : null,
          );
        } finally {
          idx?.close();
        }
      } catch (err) {
        add(
          'index',
          'fail',
          `cannot read ${index}: ${(err as Error).message}`,
          `mv ${index} ${index}.broken && kourai memoir index`,
        );
      }
    }
    const state = statePath(home);
    if (existsSync(state)) {
      try {
        openStateDbReadOnly(home).close();
        add('state', 'ok', `${state} (privacy ledger and consent) opens`);
      } catch (err) {
        add(
          'state',
          'fail',
          `${state}: ${(err as Error).message}`,
          'restore it from a backup: it records spent privacy budget and consent and cannot be rebuilt',
        );
      }
    } else {
      add('state', 'ok', `${state} not created yet (no consent given, nothing released)`);
    }
    return { ok: checks.every((c) => c.status !== 'fail'), home, checks };
  },
  exitCode: (r) => (r.ok ? 0 : 1),
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const mark = { ok: c.green('✓'), warn: c.yellow('!'), fail: c.red('✗') };
    return r.checks
      .map((k) => `${mark[k.status]} ${k.name.padEnd(11)} ${k.detail}${k.fix ? `\n  ${c.dim('fix:')} ${k.fix}` : ''}`)
      .join('\n');
  },
});
