import { z } from 'zod';
import type { Ctx } from '../context.js';
import { completionScript, SHELLS, type CompletionNode } from '../output/completion.js';
import { defineCommand } from './types.js';

const options = z.object({
  shell: z.enum(SHELLS),
  /** The command tree, described by src/cli.ts (a command cannot import the tree it is part of). */
  tree: z.custom<CompletionNode>((v) => typeof v === 'object' && v !== null && 'commands' in v),
  json: z.boolean().default(false),
});

export interface CompletionResult {
  shell: (typeof SHELLS)[number];
  script: string;
}

export default defineCommand({
  options,
  async run(opts, _ctx: Ctx): Promise<CompletionResult> {
    return { shell: opts.shell, script: completionScript(opts.shell, opts.tree) };
  },
  render: (r) => r.script,
});
