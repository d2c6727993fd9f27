import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { ConflictError, fsError } from '../../errors.js';
import { appendLines } from '../../memoir/file/append.js';
import { discoverMemoirs, memoirPathFor } from '../../memoir/file/discover.js';
import { parsePreferences, profileFor, type PlayerProfile } from '../../memoir/sample/planted/profiles.js';
import { synthSessions } from '../../memoir/sample/synth.js';
import { colors } from '../../output/color.js';
import { count } from '../../format.js';
import { progress } from '../../output/progress.js';
import { checkpoint, type Checkpoint } from '../../runtime/cancel.js';
import { defineCommand } from '../types.js';
import { optionsSchema } from '../spec-schema.js';
import { synth as spec } from './commands.js';

const name = z.string().regex(/^[A-Za-z0-9._-]+$/, { message: 'use letters, digits, dot, dash or underscore' });
const options = optionsSchema(spec, {
  player: name.default('ariadne'),
  project: name.default('sample-forge'),
  sessions: z.coerce.number().int().min(1).max(100_000).default(4),
  turns: z.coerce.number().int().min(1).max(10_000).default(12),
  seed: z.coerce.number().int().default(7),
  entries: z.coerce.number().int().min(1).optional(),
});

export interface SynthResult {
  home: string | null;
  memoirs: string[];
  entries: number;
  /** True when nothing was written because the sample forge was already there (see --force). */
  existing: boolean;
  /** The command to run next (null with --out). */
  next: string | null;
  /** The planted preferences of the player whose forge this is. */
  profile: PlayerProfile;
}

const CANCELLED = 'synth cancelled: nothing was written';

/**
 * `--out FILE`: one big memoir for benchmarks, written to a temporary file beside FILE and
 * renamed over it at the end, so Ctrl-C leaves neither a partial FILE nor the temporary file.
 */
async function synthOut(
  out: string,
  opts: z.output<typeof options>,
  profile: PlayerProfile,
  ctx: Ctx,
  cp: Checkpoint,
): Promise<SynthResult> {
  if (existsSync(out) && !opts.force)
    throw new ConflictError(`--out ${out} already exists`, 'pass --force to replace it, or choose another file');
  const target = opts.entries ?? opts.sessions * opts.turns * 3;
  const bar = progress(ctx.stderr, {
    label: 'synth',
    total: target,
    unit: 'entries',
    quiet: opts.json || ctx.quiet === true,
  });
  const tmp = `${out}.${ctx.secureRandom(6).toString('hex')}.tmp`;
  let fd: number;
  try {
    mkdirSync(dirname(out), { recursive: true });
    fd = openSync(tmp, 'wx');
  } catch (err) {
    throw fsError(err, '--out', out);
  }
  let written = 0;
  try {
    let batch: string[] = [];
    const flush = (): void => {
      if (batch.length > 0) writeSync(fd, `${batch.join('\n')}\n`);
      batch = [];
    };
    outer: for (const s of synthSessions({
      seed: opts.seed,
      sessions: Number.MAX_SAFE_INTEGER,
      turns: opts.turns,
      profile,
    })) {
      for (const line of s.lines) {
        batch.push(line);
        if (++written >= target) break outer;
      }
      if (batch.length >= 20_000) {
        flush();
        bar.update(written);
      }
      if (cp.due()) await cp.yield();
    }
    flush();
    fsyncSync(fd);
    closeSync(fd);
    cp.throwIfCancelled();
    renameSync(tmp, out);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(tmp, { force: true });
    throw err;
  }
  bar.finish();
  return { home: null, memoirs: [out], entries: written, existing: false, next: null, profile };
}

/**
 * The sample forge: sessions are written to a staging directory under the home's cache and
 * moved into the project only when all of them are complete, so Ctrl-C leaves no session of
 * this run behind (and a reader never sees a half-made forge).
 */
async function synthForge(
  home: string,
  opts: z.output<typeof options>,
  profile: PlayerProfile,
  ctx: Ctx,
  cp: Checkpoint,
): Promise<SynthResult> {
  const projectDir = join(home, 'projects', opts.player, opts.project);
  const already = discoverMemoirs(home).filter((p) => p.startsWith(projectDir));
  const next = home === kouraiHome(ctx) ? 'kourai memoir stats' : `KOURAI_HOME=${home} kourai memoir stats`;
  if (already.length > 0 && !opts.force) return { home, memoirs: already, entries: 0, existing: true, next, profile };
  const staging = join(home, 'cache', `synth-${ctx.secureRandom(6).toString('hex')}`);
  const bar = progress(ctx.stderr, {
    label: 'synth',
    total: opts.sessions,
    unit: 'sessions',
    quiet: opts.json || ctx.quiet === true,
  });
  const staged: { from: string; to: string }[] = [];
  let entries = 0;
  try {
    for (const s of synthSessions({
      seed: opts.seed + already.length,
      sessions: opts.sessions,
      turns: opts.turns,
      profile,
    })) {
      const to = memoirPathFor(home, opts.player, opts.project, s.sessionId);
      const from = join(staging, relative(home, to));
      appendLines(from, s.lines, { fsync: true });
      staged.push({ from, to });
      entries += s.entries;
      bar.update(staged.length);
      if (cp.due()) await cp.yield();
    }
    cp.throwIfCancelled();
    for (const { from, to } of staged) {
      mkdirSync(dirname(dirname(to)), { recursive: true });
      try {
        renameSync(dirname(from), dirname(to));
      } catch (err) {
        throw fsError(err, 'session directory', dirname(to));
      }
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  bar.finish();
  return { home, memoirs: staged.map((s) => s.to), entries, existing: false, next, profile };
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<SynthResult> {
    const cp = checkpoint(ctx.signal, { what: CANCELLED });
    const profile = profileFor(
      opts.player,
      opts.preferences === undefined ? undefined : parsePreferences(opts.preferences),
    );
    if (opts.out) return synthOut(resolve(ctx.cwd, opts.out), opts, profile, ctx, cp);
    return synthForge(opts.home ? resolve(ctx.cwd, opts.home) : kouraiHome(ctx), opts, profile, ctx, cp);
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.existing) {
      return [
        `nothing written: the sample forge already exists (${count(r.memoirs.length, 'memoir')}):`,
        ...r.memoirs.map((m) => `  ${m}`),
        c.dim('pass --force to add more sessions to it'),
        r.next ? `\nnext: ${r.next}` : '',
      ].join('\n');
    }
    const where = r.home ? ` under ${r.home}` : '';
    const prefs = r.profile.preferences.length > 0 ? r.profile.preferences.join(', ') : 'none';
    return [
      `wrote ${count(r.entries, 'entry', 'entries')} in ${count(r.memoirs.length, 'memoir')}${where}`,
      ...r.memoirs,
      '',
      `planted preferences of ${r.profile.player}: ${prefs} (craft: ${r.profile.craft.join(', ')})`,
      ...(r.next ? [`next: ${r.next}`] : []),
    ].join('\n');
  },
});
