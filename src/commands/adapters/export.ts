import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { ConflictError, fsError } from '../../errors.js';
import { colors } from '../../output/color.js';
import { writeFileAtomic } from '../../runtime/atomic-write.js';
import { CONFIG_FILE, MODEL_FILE } from '../../train/adapter-files.js';
import { defineCommand } from '../types.js';
import { agentArg, kindOpt, loadChecked, openRegistry, pickVersion, versionOpt } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { exportCommand as spec } from './commands.js';

const options = optionsSchema(spec, {
  agent: agentArg,
  kind: kindOpt,
  version: versionOpt.optional(),
  out: z.string({ error: 'is required: the directory to write the PEFT adapter to' }).min(1),
});

export interface AdapterExportResult {
  agent: string;
  kind: 'bond' | 'council';
  version: number;
  out: string;
  files: string[];
}

/**
 * Copies a checked version to a directory in PEFT's file layout (PEFT tensor names in
 * adapter_model.safetensors, LoraConfig fields only in adapter_config.json): the two files,
 * written to a temporary directory beside `out` and renamed into place. An existing non-empty
 * `out` is never overwritten (exit 7). Loading it with `PeftModel.from_pretrained` needs a torch
 * model with kourai's module names (encoder.dense, head.*), which kourai does not ship.
 */
export default defineCommand({
  options,
  async run(opts, ctx): Promise<AdapterExportResult> {
    const r = openRegistry(ctx);
    try {
      const row = pickVersion(r, opts.agent, opts.kind, opts.version);
      loadChecked(r, row); // refuses a damaged version before anything is written
      const out = resolve(ctx.cwd, opts.out);
      if (existsSync(out) && readdirSync(out).length > 0)
        throw new ConflictError(`export directory is not empty: ${out}`, 'choose a new directory');
      const tmp = join(dirname(out), `.${Date.now().toString(36)}-${process.pid}.export.tmp`);
      try {
        mkdirSync(tmp, { recursive: true });
        for (const f of [MODEL_FILE, CONFIG_FILE])
          writeFileAtomic(join(tmp, f), readFileSync(join(r.home, row.path, f)));
        if (existsSync(out)) rmSync(out, { recursive: true });
        renameSync(tmp, out);
      } catch (err) {
        rmSync(tmp, { recursive: true, force: true });
        throw fsError(err, 'adapter export', out);
      }
      return { agent: opts.agent, kind: opts.kind, version: row.version, out, files: [MODEL_FILE, CONFIG_FILE] };
    } finally {
      r.close();
    }
  },
  render(x, ctx) {
    const c = colors(ctx.colorLevel);
    return `exported ${x.agent} ${x.kind} v${x.version} to ${x.out}\n${c.dim(`  ${x.files.join(', ')} (PEFT layout)`)}`;
  },
});
