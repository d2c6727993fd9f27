import { chmodSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KouraiError } from '../../src/errors.js';
import { ExitCode } from '../../src/errors.js';
import { membershipPath, readMembership } from '../../src/federation/round/membership.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { SPECS, startTestCouncil, type TestCouncil } from '../council/helpers.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';
import { runCli } from '../helpers/run.js';

/** Credentials: the token never sits where other users can read it, and the membership file is the user's alone. */
const join_ = () => import('../../src/commands/federate/join.js');

let council: TestCouncil | undefined;
const homes: TestCtx[] = [];
afterEach(async () => {
  await council?.close();
  council = undefined;
  for (const h of homes.splice(0)) h.cleanup();
});

async function joined(): Promise<{ ctx: TestCtx; token: string }> {
  council ??= await startTestCouncil({ base_fingerprints: [BUILTIN_FINGERPRINT], layouts: { '*': SPECS } });
  const ctx = testCtx();
  homes.push(ctx);
  const token = await council.token(`forge${homes.length}`);
  await runCli(join_, { server: council.url, token }, ctx);
  return { ctx, token };
}

describe('federate join --token', () => {
  it('warns that the token is visible in process listings and names --token-file and stdin', async () => {
    const { ctx, token } = await joined();
    expect(ctx.stderr.text).toMatch(/warning: --token .*process list.*--token-file.*--token -/);
    expect(ctx.stderr.text).not.toContain(token);
  });

  it('no warning when the token comes from a private file; a token file others can read is refused (exit 3)', async () => {
    council ??= await startTestCouncil({ base_fingerprints: [BUILTIN_FINGERPRINT], layouts: { '*': SPECS } });
    const ctx = testCtx();
    homes.push(ctx);
    const file = join(ctx.home, 'token');
    writeFileSync(file, await council.token('thebes'), { mode: 0o600 });
    await runCli(join_, { server: council.url, tokenFile: file }, ctx);
    expect(ctx.stderr.text).not.toMatch(/warning/);
    chmodSync(file, 0o644);
    const err = (await runCli(join_, { server: council.url, tokenFile: file }, ctx).catch(
      (e: unknown) => e,
    )) as KouraiError;
    expect(err).toMatchObject({
      exitCode: ExitCode.environment,
      message: expect.stringMatching(/token file .* can be read by other users \(mode 644\)/),
    });
  });
});

describe('the membership file is refused unless private to the user', () => {
  it('a membership file readable by others (0644) is refused, exit 3', async () => {
    const { ctx } = await joined();
    chmodSync(membershipPath(ctx.home), 0o644);
    expect(() => readMembership(ctx.home)).toThrow(
      expect.objectContaining({
        exitCode: ExitCode.environment,
        message: expect.stringMatching(/can be read by other users/),
      }),
    );
  });

  it('a membership directory others can enter (0755) is refused, exit 3', async () => {
    const { ctx } = await joined();
    chmodSync(join(ctx.home, 'federation'), 0o755);
    expect(() => readMembership(ctx.home)).toThrow(
      expect.objectContaining({
        exitCode: ExitCode.environment,
        message: expect.stringMatching(/directory .*federation is open to other users \(mode 755\)/),
      }),
    );
  });

  it('a symlinked membership file (or directory) is refused, exit 3', async () => {
    const { ctx } = await joined();
    const real = join(ctx.home, 'elsewhere.json');
    renameSync(membershipPath(ctx.home), real);
    symlinkSync(real, membershipPath(ctx.home));
    expect(() => readMembership(ctx.home)).toThrow(
      expect.objectContaining({ exitCode: ExitCode.environment, message: expect.stringMatching(/is a symbolic link/) }),
    );
    const other = testCtx();
    homes.push(other);
    mkdirSync(join(other.home, 'real-federation'), { mode: 0o700 });
    symlinkSync(join(other.home, 'real-federation'), join(other.home, 'federation'));
    expect(() => readMembership(other.home)).toThrow(
      expect.objectContaining({ exitCode: ExitCode.environment, message: expect.stringMatching(/is a symbolic link/) }),
    );
  });

  it('an oversized membership file is refused without reading it whole', async () => {
    const { ctx } = await joined();
    writeFileSync(membershipPath(ctx.home), Buffer.alloc(2 * 1024 * 1024, 0x20), { mode: 0o600 });
    expect(() => readMembership(ctx.home)).toThrow(
      expect.objectContaining({ exitCode: ExitCode.environment, message: expect.stringMatching(/too large/) }),
    );
  });
});
