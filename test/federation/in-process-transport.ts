/**
 * A council in the same process as the forge, for tests: a round driven without HTTP. It calls
 * the same Council methods the HTTP routes call, with the same bodies (a release becomes the same
 * Submission), and turns the council's refusals into the same CouncilRequestError the HTTP client
 * throws.
 */
import { PROTOCOL_VERSION, submissionFromRelease } from '../../src/protocol/wire.js';
import { CouncilRequestError, decodeAdapter } from '../../src/federation/council-client.js';
import type { Council } from '../../src/council/council.js';
import { CouncilHttpError } from '../../src/council/http-error.js';
import type { ForgeRow } from '../../src/council/storage.js';
import type { CouncilTransport } from '../../src/federation/round/transport.js';

async function mapped<T>(p: () => Promise<T>): Promise<T> {
  try {
    return await p();
  } catch (err) {
    if (err instanceof CouncilHttpError) {
      const body = err.body().error;
      throw new CouncilRequestError(body.status, body.code, body.message, body.details);
    }
    throw err;
  }
}

/** `forge`: the council's row of the forge this transport speaks for (e.g. from addForge). */
export function inProcessTransport(
  council: Council,
  forge: ForgeRow,
  opts: { where?: string; version?: string } = {},
): CouncilTransport {
  return {
    where: opts.where ?? 'the in-process council',
    health: () =>
      mapped(async () => ({
        ok: true as const,
        protocol: PROTOCOL_VERSION,
        version: opts.version ?? 'in-process',
        round: (await council.currentRound().catch(() => null))?.round ?? null,
      })),
    me: () => mapped(() => council.me(forge)),
    currentRound: () => mapped(() => council.roundStatus(forge, 'current')),
    round: (n) => mapped(() => council.roundStatus(forge, n)),
    globalAdapter: async (agent) => {
      try {
        return decodeAdapter(await mapped(() => council.adapter(agent)));
      } catch (err) {
        if (err instanceof CouncilRequestError && err.councilCode === 'no_global') return null;
        throw err;
      }
    },
    aggregate: (n, agent) => mapped(async () => decodeAdapter(await council.adapter(agent, n))),
    submitRelease: (n, release) =>
      mapped(
        async () =>
          (await council.submit(forge, n, release.agent, submissionFromRelease(release, release.agent))).receipt,
      ),
    seal: (n) => mapped(() => council.seal(forge, n)),
    trust: () => mapped(() => council.trust(forge)),
  };
}
