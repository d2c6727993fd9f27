import type { PrivacyFloor } from '../privacy/privacy-floor.js';
import type { OutStream } from '../context.js';
import type { FederationPlan } from '../federation/round/plan.js';
import type { RoundEvent, RoundResult } from '../federation/round/run-round.js';
import { colors } from './color.js';
import { delta as fmtDelta, epsilon as fmtEps } from '../format.js';

/**
 * Progress of a round on stderr: one line per step (training per agent, upload, the round's
 * state while waiting, download), training epochs at most every few seconds (redrawn on a TTY).
 */
export function roundProgress(err: OutStream, opts: { now?: () => number } = {}): (e: RoundEvent) => void {
  const now = opts.now ?? (() => performance.now());
  const tty = Boolean(err.isTTY);
  let last = -Infinity;
  let drawn = false;
  const line = (s: string): void => {
    if (drawn) err.write('\r\u001b[2K');
    drawn = false;
    err.write(`${s}\n`);
  };
  return (e) => {
    switch (e.type) {
      case 'plan': {
        const p = e.plan;
        line(
          `round ${p.round} (${p.round_state}${p.resuming ? ', resuming' : ''}): ${p.speakers.length ? `${p.speakers.join(', ')} speak` : 'nobody speaks'}; σ = ${p.mechanism.noise_multiplier}, S = ${p.mechanism.clip_norm} (${p.mechanism.source === 'council' ? "the council's policy" : "this forge's settings"})`,
        );
        return;
      }
      case 'download':
        line(
          `downloading ${e.agent}'s ${e.what === 'global' ? (e.round === 0 ? 'public initialisation (round 0)' : `global adapter (round ${e.round})`) : `new council adapter (round ${e.round})`}`,
        );
        return;
      case 'training': {
        const t = now();
        if (t - last < (tty ? 200 : 5000)) return;
        last = t;
        const pr = e.progress;
        const s = `training ${e.agent}: epoch ${pr.epoch}/${pr.epochs}, batch ${pr.batch}/${pr.batches}, loss ${pr.trainLoss.toFixed(4)}`;
        if (tty) {
          err.write(`\r\u001b[2K${s}`);
          drawn = true;
        } else err.write(`${s}\n`);
        return;
      }
      case 'trained':
        line(`trained ${e.agent} on ${e.examples} council examples`);
        return;
      case 'silent':
        line(`${e.agent} stays silent: ${e.detail ?? e.verdict}`);
        return;
      case 'upload':
        line(`sending ${e.agent}'s update${e.resumed ? ' (drawn before: the same bytes)' : ''}`);
        return;
      case 'submitted':
        line(`the council accepted ${e.agent}'s update (${e.digest.slice(0, 12)}…)`);
        return;
      case 'sealed':
        line(`sealed round ${e.round}: this forge's updates are complete`);
        return;
      case 'waiting':
        line(
          `waiting for the council: round ${e.round} ${e.state}, ${e.sealed}/${e.min_forges} forges sealed, deadline ${e.deadline}`,
        );
        return;
      case 'retry':
        line(
          `the council did not answer (${e.what}): ${e.error}; trying again in ${Math.round(e.in_ms / 1000)} s (attempt ${e.attempt + 1})`,
        );
        return;
      case 'stored':
        line(`${e.agent}'s council adapter v${e.version} stored (bond adapters untouched)`);
        return;
      case 'recorded':
        line(
          `recorded the ${e.beat === 'stoa_falls' ? 'Stoa Falls' : 'Council of Sisters'} in the memoir (${e.entry_id})`,
        );
        return;
    }
  };
}

/** The plan as text: per agent exactly what would leave (the dry run prints this). */
export function renderPlan(p: FederationPlan, colorLevel: 0 | 1 | 2 | 3): string {
  const c = colors(colorLevel);
  const lines: string[] = [];
  lines.push(
    c.bold(
      `round ${p.round} at ${p.council.url} (forge "${p.council.forge}"), ${p.round_state}${p.resuming ? ', resuming a started round' : ''}`,
    ),
  );
  lines.push(
    `mechanism: S = ${p.mechanism.clip_norm}, σ = ${p.mechanism.noise_multiplier} (${p.mechanism.source === 'council' ? "the council's published policy; each release is charged to the Whisper Limit at this σ" : "this forge's settings"}), δ = ${fmtDelta(p.mechanism.delta)}; base ${p.base_fingerprint}`,
  );
  lines.push(`floor:     ${floorText(p.floor)} (this forge's privacy floor: a council policy outside it is refused)`);
  lines.push(
    `forge ε: ${fmtEps(p.forge.epsilon_spent)} of ${p.forge.epsilon_budget} spent; ${fmtEps(p.forge.epsilon_after_round)} after this round`,
  );
  for (const a of p.agents) {
    if (!a.speaks) {
      lines.push(
        `${a.agent.padEnd(10)} ${c.yellow('silent')}  ${a.why.replace(/^silent: /, '')}${a.detail ? c.dim(` (${a.detail})`) : ''}`,
      );
      continue;
    }
    const from = a.starts_from
      ? a.starts_from.kind === 'global'
        ? `starts from the global adapter of round ${a.starts_from.round}`
        : "starts from the council's public initialisation (round 0; the change from it is sent)"
      : 'drawn earlier: sent as stored';
    lines.push(
      `${a.agent.padEnd(10)} ${c.green(a.verdict === 'resumes' ? 'resumes' : 'speaks')}  ${a.examples ?? 0} council examples in ${a.scenes ?? 0} scenes; ${from}`,
    );
    if (a.request)
      lines.push(
        `           ${a.request.method} ${a.request.path}  ${a.request.content_type}  ${a.request.bytes.toLocaleString('en-US')} bytes`,
      );
    for (const t of a.tensors ?? []) lines.push(c.dim(`           ${t.name}  [${t.shape.join(', ')}]`));
    lines.push(
      `           clip S = ${a.clip_norm}, noise σ = ${a.noise_multiplier}, ε +${fmtEps(a.epsilon_cost ?? 0)} → ${fmtEps(a.epsilon_after ?? 0)} (δ = ${fmtDelta(p.mechanism.delta)})`,
    );
    lines.push(c.dim(`           ${JSON.stringify(a.envelope)}`));
  }
  return lines.join('\n');
}

export function renderRoundResult(r: RoundResult, colorLevel: 0 | 1 | 2 | 3): string {
  const c = colors(colorLevel);
  if (r.outcome === 'dry_run') return `${renderPlan(r.plan, colorLevel)}\n${c.yellow('dry run: nothing was sent')}`;
  if (r.outcome === 'waiting') {
    const sent = r.sent.map((s) => s.agent);
    return [
      `round ${r.round}: ${sent.length ? `${sent.join(', ')} spoke` : 'nothing new was sent'}; the council has not aggregated it yet (${r.state})`,
      c.dim(
        'run `kourai federate round` again later to bring it home (nothing is sent twice, no budget is spent twice)',
      ),
    ].join('\n');
  }
  const d = r.details;
  const lines = [c.green(`round ${r.round} came home.`)];
  lines.push(
    `spoke: ${d.spoke.length ? d.spoke.map((s) => `${s.agent}${s.used === false ? ' (not used by the council)' : ''}`).join(', ') : 'nobody'}`,
  );
  if (d.silent.length)
    lines.push(c.dim(`silent: ${d.silent.map((s) => `${s.agent} (${s.reason.replace(/_/g, ' ')})`).join(', ')}`));
  const back = d.came_back.filter((x) => x.aggregated);
  lines.push(
    `new council adapters: ${back.length ? back.map((x) => `${x.agent} v${x.version ?? '?'}`).join(', ') : 'none'}`,
  );
  const skipped = d.came_back.filter((x) => !x.aggregated);
  if (skipped.length)
    lines.push(c.dim(`not aggregated: ${skipped.map((x) => `${x.agent} (${x.skipped_reason ?? '?'})`).join(', ')}`));
  lines.push(
    `trust ${d.trust.after.toFixed(3)}${d.trust.before !== null ? c.dim(` (was ${d.trust.before.toFixed(3)})`) : ''}${d.trust.exiled ? c.red(' — EXILED') : ''}`,
  );
  for (const e of d.exiles)
    lines.push(
      c.red(`the Stoa falls: ${e.you ? 'this forge is' : `the forge ${e.forge} is`} exiled after round ${e.round}`),
    );
  lines.push(
    c.dim(
      `recorded in the memoir: ${r.entry_ids.join(', ')} — watch the Council of Sisters again with \`kourai federate scene\``,
    ),
  );
  return lines.join('\n');
}

/** The player's privacy floor in one phrase. */
export function floorText(f: PrivacyFloor): string {
  return `σ ≥ ${f.min_noise_multiplier}, ε ≤ ${Number(f.max_release_epsilon.toPrecision(4))} per release, S ∈ [${f.clip_norm.min}, ${f.clip_norm.max}], σ·S ≤ ${f.max_noise_std}`;
}
