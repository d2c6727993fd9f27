import { Box, Text } from 'ink';
import { count, delta, epsilon, ratio } from '../../format.js';
import type { Palette } from '../../output/theme.js';
import { VERDICT_SHORT, type GaugeLevel } from '../../privacy/budget.js';
import { bar, percent, type WhisperAgent, type WhisperReport } from '../../privacy/whisper-report.js';
import { keyLabel, WHISPER_KEYS } from '../keys.js';
import type { WhisperState } from './use-whisper-state.js';

const levelColor = (p: Palette, level: GaugeLevel | null): string | undefined =>
  level === 'ok' ? p.ok : level === 'low' ? p.warn : level ? p.error : p.muted;
const eps = (x: number | null): string => (x === null ? '—' : epsilon(x));
const SHORT: Record<string, string> = { up: 'up', down: 'down', toggleDetails: 'details', quit: 'quit' };
/** The key hints, from the same table the keys are handled by. */
const hints = WHISPER_KEYS.filter((b) => b.action !== 'cancel')
  .map((b) => `${b.keys.map(keyLabel).join('/')} ${SHORT[b.action] ?? b.action}`)
  .join(' · ');

function AgentRow({ a, selected, p }: { a: WhisperAgent; selected: boolean; p: Palette }): React.JSX.Element {
  const pointer = selected ? '›' : ' ';
  if (a.consent === 'locked') {
    return (
      <Box>
        <Box width={2} flexShrink={0}>
          <Text>{pointer}</Text>
        </Box>
        <Box width={11} flexShrink={0}>
          <Text color={p.muted}>{a.agent}</Text>
        </Box>
        <Text color={p.muted}>bond-only: never leaves the forge</Text>
      </Box>
    );
  }
  const color = levelColor(p, a.level);
  const frac = a.remaining_fraction ?? 0;
  return (
    <Box>
      <Box width={2} flexShrink={0}>
        <Text>{pointer}</Text>
      </Box>
      <Box width={11} flexShrink={0}>
        <Text bold={selected}>{a.agent}</Text>
      </Box>
      <Box width={12} flexShrink={0}>
        <Text color={color}>{bar(frac, 12)}</Text>
      </Box>
      <Box width={5} flexShrink={0} justifyContent="flex-end">
        <Text color={color}>{percent(frac)}</Text>
      </Box>
      <Box width={8} marginLeft={1} flexShrink={0}>
        <Text color={a.speaks ? p.ok : p.warn}>{a.speaks ? 'speaks' : 'silent'}</Text>
      </Box>
      <Box width={14} flexShrink={0}>
        <Text>{a.shareable_entries} shareable</Text>
      </Box>
      <Box width={10} flexShrink={0}>
        <Text>{a.speaks ? `+${eps(a.next_round_epsilon_cost)} ε` : ''}</Text>
      </Box>
      <Text color={p.muted} wrap="truncate-end">
        {VERDICT_SHORT[a.verdict]}
      </Text>
    </Box>
  );
}

function Details({ a, report, p }: { a: WhisperAgent; report: WhisperReport; p: Palette }): React.JSX.Element {
  if (a.consent === 'locked') {
    return (
      <Text color={p.muted}>
        {a.agent} is bond-only: no council head exists, nothing of theirs ever leaves the forge.
      </Text>
    );
  }
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>{a.agent}</Text>
      <Text>
        consent: {a.consent ? 'given' : 'not given'} · ε spent {eps(a.epsilon_spent)} of {a.epsilon_budget} (δ ={' '}
        {delta(report.config.delta)}) · {count(a.releases, 'release')}
      </Text>
      <Text>
        next round: {count(a.shareable_entries, 'shareable entry', 'shareable entries')}, clip norm S = {a.clip_norm},
        noise σ = {a.noise_multiplier}; its ε → {eps(a.epsilon_after_next)} (+{eps(a.next_round_epsilon_cost)}), the
        forge's +{eps(a.next_round_forge_cost)}
      </Text>
      <Text>{a.why}</Text>
      <Text color={p.muted}>
        past contributions (|clip Δ| / S):{' '}
        {a.contributions.length === 0
          ? 'none yet'
          : a.contributions
              .slice(-12)
              .map((c) => `${c.round}: ${c.clipped_fraction === null ? 'not drawn' : ratio(c.clipped_fraction)}`)
              .join('  ')}
      </Text>
    </Box>
  );
}

/** The Whisper Limit gauge. Data by props only; never opens the database. */
export function WhisperView({
  report,
  state,
  palette: p,
}: {
  report: WhisperReport;
  state: WhisperState;
  palette: Palette;
}): React.JSX.Element {
  const f = report.forge;
  const color = levelColor(p, f.level);
  const selected = report.agents[state.cursor];
  return (
    <Box flexDirection="column">
      <Text bold>Whisper Limit</Text>
      <Box>
        <Box width={13} flexShrink={0}>
          <Text>forge</Text>
        </Box>
        <Text color={color}>{bar(f.remaining_fraction, 24)}</Text>
        <Text color={color}> {percent(f.remaining_fraction)} left</Text>
        <Text>
          {'  '}ε {eps(f.epsilon_spent)} of {report.config.forge_epsilon} spent · {count(f.releases, 'release')}
        </Text>
      </Box>
      <Text color={p.muted} wrap="truncate-end">
        next round{report.round ? ` (${report.round})` : ''}: {f.speakers_next_round} speak, forge ε →{' '}
        {eps(f.epsilon_after_next_round)}; clip S = {report.priced_at.clip_norm}, σ ={' '}
        {report.priced_at.noise_multiplier} (
        {report.priced_at.source === 'council'
          ? `the council's, round ${report.priced_at.council_round ?? '?'}`
          : "this forge's"}
        ), δ = {delta(report.config.delta)}
      </Text>
      <Box flexDirection="column" marginTop={1}>
        {report.agents.map((a, i) => (
          <AgentRow key={a.agent} a={a} selected={i === state.cursor} p={p} />
        ))}
      </Box>
      {state.details && selected ? <Details a={selected} report={report} p={p} /> : null}
      {report.notes.map((n) => (
        <Text key={n} color={p.warn}>
          note: {n}
        </Text>
      ))}
      <Text color={p.muted}>{hints}</Text>
    </Box>
  );
}
