import type { ChalkInstance } from 'chalk';
import { tierOf } from '../affinity/affinity.js';
import { AGENTS } from '../memoir/format/agents.js';
import { affinity as fmtAffinity, signedAffinity as signed } from '../format.js';
import { beatTitle, visibilityNote } from '../replay/describe.js';
import type { AffinityTotals, Beat } from '../replay/story.js';
import type { StoryEvent } from '../replay/walk.js';
import { AGENT_COLOR, FELT_COLOR, TIER_COLOR } from './theme.js';
import { oneLine } from './table.js';

/**
 * The replay as plain text (pipes, CI, `--no-input`): the same story as the screen, one event at
 * a time. Free text is flattened to one line (newlines shown as ⏎) and cut to the width.
 */
export function storyEventText(ev: StoryEvent, c: ChalkInstance, width: number): string {
  const text = Math.max(20, width - 16);
  switch (ev.type) {
    case 'session': {
      const s = ev.session;
      const where = s.player && s.project ? ` ${c.dim('·')} ${s.player}/${s.project}` : '';
      const when = s.startedAt ? ` ${c.dim('·')} started ${s.startedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}` : '';
      return `${c.bold(`session ${s.session}`)}${where}${when}\n${c.dim(`  memoir ${s.path}`)}\n`;
    }
    case 'scene':
      return `  ${c.bold.underline(`scene ${ev.scene_id}`)}\n`;
    case 'beat':
      return beatText(ev.beat, ev.affinity_after, c, text);
    case 'session_end':
      return `  ${c.dim('affinity')}  ${affinityLine(ev.affinity, c)}\n\n`;
  }
}

function beatText(b: Beat, after: number, c: ChalkInstance, width: number): string {
  const agent = c[AGENT_COLOR[b.agent]](b.agent);
  const lines: string[] = [];
  const tags = [
    b.source.replace(/_/g, ' '),
    b.entry_type !== 'pipeline_turn' ? b.entry_type.replace(/_/g, ' ') : null,
    b.shared ? null : 'private',
  ]
    .filter(Boolean)
    .join(', ');
  if (b.interrupt) {
    const it = b.interrupt;
    const vis = it.shown_to_player ? visibilityNote(it.visibility) : c.yellow(visibilityNote(it.visibility));
    lines.push(
      `    ↯ ${agent} interrupts ${c[AGENT_COLOR[it.target]](it.target)} ${c.dim('·')} ${it.reason} ${c.dim('·')} ${vis}`,
    );
  } else {
    lines.push(`    ${agent} ${c.dim('·')} ${beatTitle(b)} ${c.dim(`(${tags})`)}`);
  }
  if (b.proposed !== null) lines.push(`      ${c.dim('says     ')}${oneLine(b.proposed, width)}`);
  if (b.response) {
    const felt = b.response.felt ? c[FELT_COLOR[b.response.felt]](`felt ${b.response.felt}`) : c.dim('felt —');
    const rating = b.likert !== null ? ` ${c.dim('·')} rated ${b.likert}/5` : '';
    lines.push(`      ${c.dim('player   ')}${b.response.kind} ${c.dim('·')} ${felt}${rating}`);
    if (b.response.delta !== null) lines.push(`      ${c.dim('revised  ')}${oneLine(b.response.delta, width)}`);
  }
  if (b.comment) lines.push(`      ${c.dim('comment  ')}${oneLine(b.comment, width)}`);
  if (b.affinity_delta !== 0) {
    const d = b.affinity_delta > 0 ? c.green(signed(b.affinity_delta)) : c.red(signed(b.affinity_delta));
    const tier = tierOf(after);
    lines.push(
      `      ${c.dim('affinity ')}${d} ${c.dim('→')} ${b.agent} ${fmtAffinity(after)} ${c[TIER_COLOR[tier]](tier)}`,
    );
  }
  lines.push(`      ${c.dim(`${b.entry_id}${b.supersedes ? ` (revises ${b.supersedes})` : ''}`)}`);
  return `${lines.join('\n')}\n`;
}

export function affinityLine(totals: AffinityTotals, c: ChalkInstance): string {
  const parts = AGENTS.filter((a) => totals[a] !== undefined).map((a) => {
    const v = totals[a] as number;
    return `${c[AGENT_COLOR[a]](a)} ${fmtAffinity(v)}`;
  });
  return parts.length ? parts.join(c.dim(' · ')) : c.dim('no changes yet');
}
