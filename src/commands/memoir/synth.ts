import { closeSync, fsyncSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { appendLines } from '../../memoir/append.js';
import { discoverMemoirs, memoirPathFor } from '../../memoir/discover.js';
import { parsePreferences, profileFor, type PlayerProfile } from '../../memoir/planted/profiles.js';
import { synthSessions } from '../../memoir/synth.js';
import { progress } from '../../output/progress.js';
import { defineCommand } from '../types.js';

const name = z.string().regex(/^[A-Za-z0-9._-]+$/, { message: 'use letters, digits, dot, dash or underscore' });
const options = z.object({
  home: z.string().optional(),
  player: name.default('ariadne'),
  preferences: z.string().optional(),
  project: name.default('sample-forge'),
  sessions: z.coerce.number().int().min(1).max(100_000).default(4),
  turns: z.coerce.number().int().min(1).max(10_000).default(12),
  seed: z.coerce.number().int().default(7),
  out: z.string().optional(),
  entries: z.coerce.number().int().min(1).optional(),
  force: z.boolean().default(false),
  json: z.boolean().default(false),
});

export interface SynthResult {
  home: string | null;
  memoirs: string[];
  entries: number;
  existing: boolean;
  /** The planted preferences of the player whose forge this is. */
  profile: PlayerProfile;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<SynthResult> {
    const profile = profileFor(opts.player, opts.preferences === undefined ? undefined : parsePreferences(opts.preferences));
    if (opts.out) {
      const out = resolve(ctx.cwd, opts.out);
      const target = opts.entries ?? opts.sessions * opts.turns * 3;
      const bar = progress(ctx.stderr, { label: 'synth', total: target, unit: 'entries', quiet: opts.json });
      let written = 0;
      let batch: string[] = [];
      outer: for (const s of synthSessions({ seed: opts.seed, sessions: Number.MAX_SAFE_INTEGER, turns: opts.turns, profile })) {
        for (const line of s.lines) {
          batch.push(line);
          if (++written >= target) break outer;
        }
        if (batch.length >= 20_000) {
          appendLines(out, batch, { fsync: false });
          batch = [];
          bar.update(written);
        }
      }
      appendLines(out, batch, { fsync: false });
      const fd = openSync(out, 'r');
      fsyncSync(fd);
      closeSync(fd);
      bar.finish();
      return { home: null, memoirs: [out], entries: written, existing: false, profile };
    }
    const home = opts.home ? resolve(ctx.cwd, opts.home) : kouraiHome(ctx);
    const projectDir = join(home, 'projects', opts.player, opts.project);
    const already = discoverMemoirs(home).filter((p) => p.startsWith(projectDir));
    if (already.length > 0 && !opts.force) {
      ctx.stderr.write(`the sample forge already exists at ${projectDir} (pass --force to add more sessions)\n`);
      return { home, memoirs: already, entries: 0, existing: true, profile };
    }
    const memoirs: string[] = [];
    let entries = 0;
    for (const s of synthSessions({ seed: opts.seed + already.length, sessions: opts.sessions, turns: opts.turns, profile })) {
      const path = memoirPathFor(home, opts.player, opts.project, s.sessionId);
      appendLines(path, s.lines, { fsync: true });
      memoirs.push(path);
      entries += s.entries;
    }
    return { home, memoirs, entries, existing: false, profile };
  },
  render(r) {
    if (r.existing) return r.memoirs.join('\n');
    const prefs = r.profile.preferences.length > 0 ? r.profile.preferences.join(', ') : 'none';
    return `wrote ${r.entries} entries in ${r.memoirs.length} memoir${r.memoirs.length === 1 ? '' : 's'}${r.home ? ` under ${r.home}` : ''}\n${r.memoirs.join('\n')}\n\nplanted preferences of ${r.profile.player}: ${prefs} (craft: ${r.profile.craft.join(', ')})\nnext: kourai memoir stats`;
  },
});
