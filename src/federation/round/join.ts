/**
 * Joining a council: check that it is a kourai council speaking our protocol, that the token is
 * accepted, and that it accepts this forge's base model; then store the membership (0600).
 * Nothing is stored when a check fails.
 */
import { EnvironmentError, KouraiError, ExitCode } from '../../errors.js';
import { CouncilRequestError } from '../council-client.js';
import { PROTOCOL_VERSION } from '../../protocol/wire.js';
import { MEMBERSHIP_FORMAT, readMembership, writeMembership, type Membership } from './membership.js';
import { writeKnownPolicy } from './known-policy.js';
import { councilKeyOf } from './round-key.js';
import type { CouncilTransport } from './transport.js';

export interface JoinFindings {
  url: string;
  protocol: number;
  council_version: string;
  current_round: number | null;
  forge: string;
  trust: number;
  exiled: boolean;
  base: { forge: string; accepted: string[]; match: boolean };
  privacy_policy: { clip_norm: number; noise_multiplier: number } | null;
  council_key: string;
  /** The council this forge was a member of before (replaced), or null. */
  replaced: string | null;
}

/** Refusals of the token, in words a player can act on (exit 9). */
export function explainCouncilRefusal(err: unknown, where: string): unknown {
  if (!(err instanceof CouncilRequestError)) return err;
  if (err.councilCode === 'unauthorized') {
    return new KouraiError(`the council at ${where} refused the token (unknown or revoked): nothing was sent`, {
      exitCode: ExitCode.network,
      code: 'council_unauthorized',
      hint: 'ask the council operator for a new token (kourai council forge add NAME), then kourai federate join again',
    });
  }
  if (err.councilCode === 'forge_revoked') {
    return new KouraiError(`the council at ${where} revoked this forge: nothing was sent`, {
      exitCode: ExitCode.network,
      code: 'council_forge_revoked',
      hint: 'ask the council operator',
    });
  }
  return err;
}

/** A health answer that says the server is no council at all (a 404, or a body that is not a council's). */
export function isNotACouncil(err: unknown): err is CouncilRequestError {
  return err instanceof CouncilRequestError && (err.councilCode === 'bad_response' || err.status === 404);
}

/** Exit 9 with the URL to check: what join and round say of a server that is not a kourai council. */
export function notACouncil(url: string, err: Error, outcome: string): KouraiError {
  return new KouraiError(`${url} does not answer like a kourai council (GET /v1/health: ${err.message}): ${outcome}`, {
    exitCode: ExitCode.network,
    code: 'not_a_council',
    hint: 'check the URL (e.g. https://council.example.org, without /v1)',
  });
}

export async function joinCouncil(p: {
  home: string;
  url: string;
  token: string;
  forgeFingerprint: string;
  transport: CouncilTransport;
  eventsMemoir: string;
  now: Date;
}): Promise<{ membership: Membership; findings: JoinFindings }> {
  const t = p.transport;
  let health;
  try {
    health = await t.health();
  } catch (err) {
    if (isNotACouncil(err)) {
      throw notACouncil(p.url, err, 'not joined');
    }
    throw err;
  }
  if (health.protocol !== PROTOCOL_VERSION) {
    throw new KouraiError(
      `the council at ${p.url} speaks protocol v${health.protocol}; this kourai speaks v${PROTOCOL_VERSION}: not joined`,
      {
        exitCode: ExitCode.network,
        code: 'protocol_mismatch',
        hint:
          health.protocol > PROTOCOL_VERSION
            ? 'upgrade kourai'
            : 'the council runs an older kourai: ask its operator to upgrade',
      },
    );
  }
  let me;
  let round;
  try {
    me = await t.me();
    round = await t.currentRound();
  } catch (err) {
    throw explainCouncilRefusal(err, p.url);
  }
  const accepted = round.accepted_base_fingerprints;
  const match = accepted.includes(p.forgeFingerprint);
  if (!match) {
    throw new EnvironmentError(
      `the council at ${p.url} accepts base model${accepted.length === 1 ? '' : 's'} ${accepted.join(', ') || '(none)'}; this forge runs ${p.forgeFingerprint}: not joined`,
      'a forge can only federate with a council of the same base model (see the learn section of config.json)',
    );
  }
  const previous = readMembership(p.home);
  const membership: Membership = {
    format: MEMBERSHIP_FORMAT,
    url: p.url,
    token: p.token,
    forge: me.forge,
    council_key: councilKeyOf({ url: p.url, forge: me.forge, registeredAt: me.created_at }),
    joined_at: p.now.toISOString(),
    protocol: health.protocol,
    council_version: health.version,
    base_fingerprint: p.forgeFingerprint,
    events_memoir: previous?.url === p.url && previous.forge === me.forge ? previous.events_memoir : p.eventsMemoir,
  };
  writeMembership(p.home, membership);
  if (round.privacy_policy)
    writeKnownPolicy(p.home, {
      council_key: membership.council_key,
      round: round.round,
      clip_norm: round.privacy_policy.clip_norm,
      noise_multiplier: round.privacy_policy.noise_multiplier,
      seen_at: p.now.toISOString(),
    });
  return {
    membership,
    findings: {
      url: p.url,
      protocol: health.protocol,
      council_version: health.version,
      current_round: health.round,
      forge: me.forge,
      trust: me.trust,
      exiled: me.exiled,
      base: { forge: p.forgeFingerprint, accepted: [...accepted], match },
      privacy_policy: round.privacy_policy ?? null,
      council_key: membership.council_key,
      replaced: previous && previous.url !== p.url ? previous.url : null,
    },
  };
}
