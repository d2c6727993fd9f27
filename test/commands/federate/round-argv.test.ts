import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../../../src/cli.js';
import { ExitCode, type KouraiError } from '../../../src/errors.js';
import { testCtx, type TestCtx } from '../../helpers/ctx.js';

/** argv -> options -> the first refusal, through the real commander tree (in-process): bad input sends nothing. */
let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => ctx.cleanup());

async function refusal(argv: string[]): Promise<KouraiError> {
  const program = buildCli(
    () => ctx,
    () => undefined,
  );
  try {
    await program.parseAsync(['node', 'kourai', ...argv]);
  } catch (err) {
    return err as KouraiError;
  }
  throw new Error(`${argv.join(' ')} did not fail`);
}

describe('kourai federate round: bad input', () => {
  it.each([
    [['federate', 'round', '--wait-for', 'soon'], ExitCode.usage, /"soon" is not a duration.*--wait-for|--wait-for/],
    [['federate', 'round', '--retry-for', '-5'], ExitCode.usage, /--retry-for/],
    [['federate', 'round', '--wait-for', '0'], ExitCode.usage, /--wait-for 0: pass --no-wait/],
    [['federate', 'round', '--dry-run'], ExitCode.environment, /has not joined a council|not joined/],
    [['whisper', '--next-round'], ExitCode.environment, /has not joined a council|not joined/],
    [['federate', 'scene'], ExitCode.usage, /not joined a council: pass --memoir/],
  ])('%j: exit %i, one line naming it', async (argv, code, message) => {
    const err = await refusal(argv);
    expect(err.exitCode).toBe(code);
    expect(err.message).toMatch(message);
    expect(err.message.split('\n')).toHaveLength(1);
  });
});
