import { UsageError } from '../../errors.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { agentArg, kindOpt, loadChecked, openRegistry, pickVersion, sameBase, versionOpt } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { rollback as spec } from './commands.js';

const options = optionsSchema(spec, {
  agent: agentArg,
  kind: kindOpt,
  to: versionOpt.optional(),
});

export interface RollbackResult {
  agent: string;
  kind: 'bond' | 'council';
  from: number;
  to: number;
}

/**
 * Makes an earlier version current again (default: the version the current one was trained
 * after). The target is read and checked whole first; files are never changed, so rolling
 * forward again is another rollback --to.
 */
export default defineCommand({
  options,
  async run(opts, ctx): Promise<RollbackResult> {
    const r = openRegistry(ctx, 'write');
    try {
      const current = pickVersion(r, opts.agent, opts.kind, undefined);
      const toVersion = opts.to ?? current.parentVersion ?? undefined;
      if (toVersion === undefined)
        throw new UsageError(
          `${opts.agent} ${opts.kind} v${current.version} has no earlier version to roll back to`,
          'name one with --to N',
        );
      const target = pickVersion(r, opts.agent, opts.kind, toVersion);
      loadChecked(r, target);
      if (sameBase(r, target) === false)
        throw new UsageError(
          `${opts.agent} ${opts.kind} v${target.version} is over another base than the configured one: it could not be used`,
        );
      r.registry.setCurrent(opts.agent, opts.kind, target.version, ctx.now().toISOString());
      return { agent: opts.agent, kind: opts.kind, from: current.version, to: target.version };
    } finally {
      r.close();
    }
  },
  render(x, ctx) {
    const c = colors(ctx.colorLevel);
    return x.from === x.to
      ? c.dim(`${x.agent} ${x.kind}: v${x.to} is already current`)
      : `${x.agent} ${x.kind}: current is now v${x.to} (was v${x.from})`;
  },
});
