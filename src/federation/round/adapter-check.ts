/**
 * What the council sends back is checked before anything of it is used or stored: its tensors
 * must be exactly this forge's layout for the agent (names, shapes, order), every value finite,
 * and an aggregate may move the global it started from by no more than the round's privacy
 * policy allows. Each update the council accepted has norm at most B = S·(1 + σ(√d + t)) for the
 * policy's largest S and σ (protocol/norm-bound.ts); a mean of n of them stays within B, a
 * coordinate-wise rule (median, trimmed mean) within √n·B; the council's server step η multiplies
 * that, so the check allows 2·η·√n·B, η at most SERVER_LR_MAX. A council adapter outside that is
 * refused (exit 5) and the current adapters stay.
 *
 * A global a forge starts from has no earlier adapter of its own to compare with: it is checked
 * against the public initialisation it descends from, which the forge recomputes (round 0 must be
 * it exactly; round g may differ from it by at most the sum of that allowance over the rounds that
 * produced it, read from their statuses).
 */
import { ExitCode, KouraiError } from '../../errors.js';
import { normBound, SERVER_LR_MAX } from '../../protocol/norm-bound.js';
import { publicInit, PUBLIC_INIT_SCHEME } from '../../protocol/public-init.js';
import type { PrivacyPolicy, RoundStatus } from '../../protocol/wire.js';
import type { NamedTensor, TensorSpec } from '../../tensor/tensor.js';
import type { DownloadedAdapter } from '../council-client.js';

export function refusedAdapter(agent: string, round: number, why: string): KouraiError {
  return new KouraiError(
    `the council's ${agent} adapter of round ${round} ${why}: refused, nothing of it was stored (the current adapters stay)`,
    {
      exitCode: ExitCode.invalidData,
      code: 'council_adapter_refused',
      hint: 'the council (or something in front of it) is broken or hostile: tell its operator; kourai federate round asks again',
    },
  );
}

/** Throws `council_adapter_refused` unless the adapter is exactly the layout, finite, and (with `moved`) within the policy's bound. */
export function checkCouncilAdapter(
  a: DownloadedAdapter,
  p: {
    layout: readonly TensorSpec[];
    moved?: { from: readonly NamedTensor[]; policy: PrivacyPolicy; used: number; serverLr?: number | undefined };
  },
): void {
  const { agent, round } = a;
  const names = a.tensors.map((t) => t.name);
  const expected = p.layout.map((t) => t.name);
  const unknown = names.filter((n) => !expected.includes(n));
  const missing = expected.filter((n) => !names.includes(n));
  if (unknown.length || missing.length || names.length !== expected.length) {
    const parts = [
      unknown.length
        ? `unknown tensor${unknown.length === 1 ? '' : 's'} ${unknown
            .slice(0, 3)
            .map((n) => JSON.stringify(n))
            .join(', ')}`
        : '',
      missing.length
        ? `missing ${missing
            .slice(0, 3)
            .map((n) => JSON.stringify(n))
            .join(', ')}`
        : '',
    ].filter(Boolean);
    throw refusedAdapter(
      agent,
      round,
      `does not match this forge's ${agent} layout (${parts.join('; ') || 'a tensor appears twice'})`,
    );
  }
  for (const [i, spec] of p.layout.entries()) {
    const t = a.tensors[i] as NamedTensor;
    if (t.name !== spec.name || t.shape.length !== spec.shape.length || t.shape.some((d, k) => d !== spec.shape[k])) {
      throw refusedAdapter(
        agent,
        round,
        `has tensor ${JSON.stringify(t.name)} as [${t.shape.join(', ')}] where this forge's layout has ${JSON.stringify(spec.name)} [${spec.shape.join(', ')}]`,
      );
    }
    for (let k = 0; k < t.data.length; k++) {
      const x = t.data[k] as number;
      if (x - x !== 0)
        throw refusedAdapter(
          agent,
          round,
          `holds ${Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity'} in ${JSON.stringify(t.name)} at index ${k}`,
        );
    }
  }
  if (!p.moved) return;
  const from = new Map(p.moved.from.map((t) => [t.name, t]));
  let sq = 0;
  let d = 0;
  for (const t of a.tensors) {
    const b = from.get(t.name);
    if (!b || b.data.length !== t.data.length)
      throw refusedAdapter(
        agent,
        round,
        `cannot be compared with the global it started from (${JSON.stringify(t.name)})`,
      );
    for (let k = 0; k < t.data.length; k++) {
      const x = (t.data[k] as number) - (b.data[k] as number);
      sq += x * x;
    }
    d += t.data.length;
  }
  const allowed = roundAllowance(p.moved.policy, d, p.moved.used, p.moved.serverLr);
  const moved = Math.sqrt(sq);
  if (!(moved <= allowed)) {
    throw refusedAdapter(
      agent,
      round,
      `moves the global by ${moved.toPrecision(4)}, more than round ${round}'s privacy policy allows for ${Math.max(1, p.moved.used)} update${p.moved.used === 1 ? '' : 's'} (at most ${allowed.toPrecision(4)})`,
    );
  }
}

/** Throws before anything is spent when the update to release is not finite (it came from a council global). */
export function checkFiniteDelta(agent: string, round: number, delta: readonly NamedTensor[]): void {
  for (const t of delta) {
    for (let k = 0; k < t.data.length; k++) {
      const x = t.data[k] as number;
      if (x - x !== 0)
        throw refusedAdapter(
          agent,
          round,
          `led to an update holding ${Number.isNaN(x) ? 'NaN' : 'an infinite value'} (${JSON.stringify(t.name)}): nothing was spent or sent`,
        );
    }
  }
}

/** How far one round's aggregate of `used` updates may move a global of d coordinates (see above). */
function roundAllowance(pol: PrivacyPolicy, d: number, used: number, serverLr: number | undefined): number {
  const perUpdate = normBound(pol.accepted.clip_norm.max, pol.accepted.noise_multiplier.max, d, pol.tail_margin);
  const step = Math.min(Math.max(1, serverLr ?? 1), SERVER_LR_MAX);
  return 2 * step * Math.sqrt(Math.max(1, used)) * perUpdate;
}

/**
 * Checks the global of round `g` an agent starts from against the public initialisation it
 * descends from (`statusOf(k)`: the status of round k, asked once per round). A global whose
 * initialisation scheme this forge does not know cannot be checked, and is refused.
 */
export async function checkGlobalDescent(
  a: DownloadedAdapter,
  p: {
    layout: readonly TensorSpec[];
    /** The round asked for (what the document says of itself is not taken on trust). */
    round: number;
    publicInit: RoundStatus['public_init'];
    statusOf: (round: number) => Promise<RoundStatus>;
  },
): Promise<void> {
  checkCouncilAdapter(a, { layout: p.layout });
  const { agent } = a;
  if (p.publicInit.scheme !== PUBLIC_INIT_SCHEME)
    throw refusedAdapter(
      agent,
      p.round,
      `cannot be checked: the council's public initialisation scheme ${JSON.stringify(p.publicInit.scheme)} is not one this kourai knows (${PUBLIC_INIT_SCHEME})`,
    );
  const round = p.round;
  const init = publicInit(p.layout, agent, p.publicInit.seed);
  let sq = 0;
  let d = 0;
  a.tensors.forEach((t, i) => {
    const b = (init[i] as NamedTensor).data;
    for (let k = 0; k < t.data.length; k++) {
      const x = (t.data[k] as number) - (b[k] as number);
      sq += x * x;
    }
    d += t.data.length;
  });
  const moved = Math.sqrt(sq);
  if (round === 0) {
    if (moved !== 0)
      throw refusedAdapter(agent, 0, `is not the public initialisation (it differs by ${moved.toPrecision(4)})`);
    return;
  }
  // The rounds that produced it, newest first: each moved it by at most its allowance.
  let allowed = 0;
  for (let k = round; k > 0;) {
    const st = await p.statusOf(k);
    const out = st.outcomes.find((o) => o.agent === agent);
    const from = st.globals[agent];
    if (!out?.aggregated || from === undefined || !(from < k))
      throw refusedAdapter(
        agent,
        round,
        `descends from round ${k}, which the council does not say aggregated ${agent} from an earlier global`,
      );
    allowed += roundAllowance(st.privacy_policy, d, out.used, st.strategy?.server_lr);
    k = from;
  }
  if (!(moved <= allowed)) {
    throw refusedAdapter(
      agent,
      round,
      `is ${moved.toPrecision(4)} from the public initialisation, more than the ${round === 1 ? 'round that produced it allows' : `${round} rounds that produced it allow`} (at most ${allowed.toPrecision(4)})`,
    );
  }
}
