import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { Ctx } from '../../context.js';
import { CancelledError, EnvironmentError, fsError, UsageError } from '../../errors.js';
import { AGENTS, FEDERATING_AGENTS, isBondOnly, type Agent } from '../../memoir/format/agents.js';
import {
  dpoChatRecord,
  dpoRecord,
  encodeDpoChatRecord,
  encodeDpoRecord,
  isWellFormed,
} from '../../memoir/derive/export-trl-dpo.js';
import { AgentSchema } from '../../memoir/format/schema.js';
import { colors } from '../../output/color.js';
import { progress } from '../../output/progress.js';
import { renderTable } from '../../output/table.js';
import type { PairExample } from '../../train/examples/types.js';
import { bondView, councilView, sceneDescriptions, type ExampleSource } from '../../train/examples/views.js';
import { defineCommand } from '../types.js';
import { openIndexed } from './shared.js';
import { warn } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { exportCommand as spec } from './commands.js';

const options = optionsSchema(spec, {
  format: z.enum(['trl-dpo', 'trl-dpo-chat'], {
    error: (iss) =>
      iss.input === undefined
        ? 'is required: trl-dpo (TRL’s DPO preference format) or trl-dpo-chat (its conversational form)'
        : `${JSON.stringify(iss.input)} is not a format; expected trl-dpo or trl-dpo-chat`,
  }),
  agent: z.array(z.string().pipe(AgentSchema)).default([]),
});

export interface ExportFile {
  agent: Agent;
  path: string;
  records: number;
}

export interface ExportResult {
  format: 'trl-dpo' | 'trl-dpo-chat';
  out: string;
  include_private: boolean;
  /** One file per agent that has preference pairs (agents without any get no file). */
  files: ExportFile[];
  /** Agents looked at that had no pair to export. */
  empty: Agent[];
  records: number;
  /** Pairs left out because a text is not well-formed UTF-16 (a lone surrogate cannot be written as UTF-8). */
  malformed: number;
}

/** The export's default directory (relative to the working directory): the format's name. */
export const DEFAULT_EXPORT_DIR = 'trl-dpo';

function agentsToExport(asked: readonly Agent[], includePrivate: boolean): Agent[] {
  if (asked.length === 0) return includePrivate ? [...AGENTS] : [...FEDERATING_AGENTS];
  if (!includePrivate) {
    const bondOnly = asked.find(isBondOnly);
    if (bondOnly)
      throw new UsageError(
        `--agent ${bondOnly}: ${bondOnly} is bond-only, so nothing of it is shareable`,
        'add --include-private to export what stays on this machine',
      );
  }
  return [...new Set(asked)];
}

function pairsOf(source: ExampleSource, agent: Agent, includePrivate: boolean, signal: AbortSignal): PairExample[] {
  const view = includePrivate ? bondView(source, agent, { signal }) : councilView(source, agent, { signal });
  return view.examples.filter((e): e is PairExample => e.kind === 'pair');
}

/** Writes `lines` to a temporary file beside `path`, fsynced; returns the temporary path. */
function writeTemp(path: string, lines: readonly string[], suffix: string): string {
  const tmp = `${path}.${suffix}.tmp`;
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'w', 0o600);
    writeSync(fd, lines.map((l) => `${l}\n`).join(''));
    fsyncSync(fd);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw fsError(err, 'export file', path);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return tmp;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ExportResult> {
    const agents = agentsToExport(opts.agent, opts.includePrivate);
    if (opts.includePrivate) {
      warn(
        ctx,
        '--include-private: the files hold private entries and the player’s own words (revisions, task descriptions); keep them on this machine',
      );
    }
    const dir = opts.out ?? (opts.format === 'trl-dpo' ? DEFAULT_EXPORT_DIR : opts.format);
    const out = resolve(ctx.cwd, dir);
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, { quiet: opts.json });
    const source: ExampleSource = { index, files: fileIds };
    const bar = progress(ctx.stderr, { label: 'export', total: agents.length, unit: 'agents', quiet: opts.json });
    // Each agent's file is written and fsynced beside its target, and all are renamed over their
    // targets only at the end: a reader, a failure or a Ctrl-C never leaves half a file.
    const suffix = ctx.secureRandom(6).toString('hex');
    const written: { agent: Agent; path: string; tmp: string; records: number }[] = [];
    const empty: Agent[] = [];
    let malformed = 0;
    try {
      if (existsSync(out) && !statSync(out).isDirectory())
        throw new EnvironmentError(
          `--out ${dir}: not a directory (${out})`,
          'give a directory for the files, one per agent',
        );
      try {
        mkdirSync(out, { recursive: true });
      } catch (err) {
        throw fsError(err, 'export directory', out);
      }
      agents.forEach((agent, i) => {
        const lines: string[] = [];
        const pairs = pairsOf(source, agent, opts.includePrivate, ctx.signal);
        // The task description is the player's private text: only with --include-private.
        const scenes = opts.includePrivate
          ? sceneDescriptions(
              source,
              pairs.map((p) => p.scene),
            )
          : null;
        try {
          for (const p of pairs) {
            const input = {
              agent,
              taskType: p.taskType,
              description: scenes ? scenes.describe(p.scene) : null,
              chosen: p.chosen,
              rejected: p.rejected,
            };
            const rec = dpoRecord(input);
            if (!isWellFormed(rec.prompt) || !isWellFormed(rec.chosen) || !isWellFormed(rec.rejected)) {
              malformed++;
              continue;
            }
            lines.push(opts.format === 'trl-dpo' ? encodeDpoRecord(rec) : encodeDpoChatRecord(dpoChatRecord(input)));
          }
        } finally {
          scenes?.close();
        }
        if (lines.length === 0) empty.push(agent);
        else {
          const path = join(out, `${agent}.jsonl`);
          written.push({ agent, path, tmp: writeTemp(path, lines, suffix), records: lines.length });
        }
        bar.update(i + 1);
      });
      if (ctx.signal.aborted) throw new CancelledError();
      for (const w of written) renameSync(w.tmp, w.path);
    } catch (err) {
      for (const w of written) rmSync(w.tmp, { force: true });
      throw err;
    } finally {
      index.close();
    }
    bar.finish();
    const files = written.map(({ agent, path, records }) => ({ agent, path, records }));
    return {
      format: opts.format,
      out,
      include_private: opts.includePrivate,
      files,
      empty,
      records: files.reduce((n, f) => n + f.records, 0),
      malformed,
    };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const lines: string[] = [];
    if (r.files.length === 0)
      lines.push(
        `no preference pairs to export${r.include_private ? '' : ' that may leave the forge (try --include-private)'}; nothing written`,
      );
    else {
      lines.push(
        `wrote ${r.records} ${r.include_private ? '' : 'shareable '}preference pair${r.records === 1 ? '' : 's'} in TRL's DPO format${r.format === 'trl-dpo-chat' ? ' (conversational: messages with roles)' : ''} to ${r.out}`,
      );
      lines.push(
        renderTable(r.files, [
          { header: 'AGENT', get: (f) => f.agent },
          { header: 'PAIRS', get: (f) => String(f.records), align: 'right' },
          { header: 'FILE', get: (f) => f.path },
        ]).trimEnd(),
      );
    }
    if (r.empty.length > 0) lines.push(c.dim(`no pairs: ${r.empty.join(', ')}`));
    if (r.malformed > 0)
      lines.push(c.yellow(`${r.malformed} pair${r.malformed === 1 ? '' : 's'} left out: a text is not valid Unicode`));
    if (r.files.length > 0)
      lines.push(
        c.dim(
          `load with: datasets.load_dataset("json", data_files="${r.files[0]?.path ?? ''}") and give it to trl.DPOTrainer`,
        ),
      );
    return lines.join('\n');
  },
});
