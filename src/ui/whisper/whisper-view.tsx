import { Box, Text } from 'ink';
import { VERDICT_SHORT, type GaugeLevel } from '../../privacy/budget.js';
import { bar, percent, type WhisperAgent, type WhisperReport } from '../../privacy/whisper-report.js';
import type { WhisperState } from './use-whisper-state.js';
import { delta, epsilon, ratio } from '../../format.js';

const LEVEL_COLOR: Record<GaugeLevel, string> = { ok: 'green', low: 'yellow', critical: 'red', exhausted: 'red' };

const eps = (x: number | null): string => (x === null ? '—' : epsilon(x));

function AgentRow({ a, selected }: { a: WhisperAgent; selected: boolean }): React.JSX.Element {
  const pointer = selected ? '›' : ' ';
  if (a.consent === 'locked') {
    return (
      <Box>
        <Box width={2} flexShrink={0}>
          <Text>{pointer}</Text>
        </Box>
        <Box width={11} flexShrink={0}>
          <Text dimColor>{a.agent}</Text>
        </Box>
        <Text dimColor>bond-only: never leaves the forge</Text>
      </Box>
    );
  }
  const color = a.level ? LEVEL_COLOR[a.level] : 'gray';
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
        <Text color={a.speaks ? 'green' : 'yellow'}>{a.speaks ? 'speaks' : 'silent'}</Text>
      </Box>
      <Box width={14} flexShrink={0}>
        <Text>{a.shareable_entries} shareable</Text>
      </Box>
      <Box width={10} flexShrink={0}>
        <Text>{a.speaks ? `+${eps(a.next_round_epsilon_cost)} ε` : ''}</Text>
      </Box>
      <Text dimColor>{VERDICT_SHORT[a.verdict]}</Text>
    </Box>
  );
}

function Details({ a, report }: { a: WhisperAgent; report: WhisperReport }): React.JSX.Element {
  if (a.consent === 'locked') {
    return <Text dimColor>{a.agent} is bond-only: no council head exists, nothing of theirs ever leaves the forge.</Text>;
  }
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>{a.agent}</Text>
      <Text>
        consent: {a.consent ? 'given' : 'not given'} · ε spent {eps(a.epsilon_spent)} of {a.epsilon_budget} (δ = {delta(report.config.delta)}) · {a.releases} release{a.releases === 1 ? '' : 's'}
      </Text>
      <Text>
        next round: {a.shareable_entries} shareable entries, clip norm S = {a.clip_norm}, noise σ = {a.noise_multiplier}; its ε → {eps(a.epsilon_after_next)} (+{eps(a.next_round_epsilon_cost)}), the forge's +{eps(a.next_round_forge_cost)}
      </Text>
      <Text>{a.why}</Text>
      <Text dimColor>
        past contributions (|clip Δ| / S):{' '}
        {a.contributions.length === 0 ? 'none yet' : a.contributions.slice(-12).map((c) => `${c.round}: ${c.clipped_fraction === null ? 'not drawn' : ratio(c.clipped_fraction)}`).join('  ')}
      </Text>
    </Box>
  );
}

/** The Whisper Limit gauge. Data by props only; never opens the database. */
export function WhisperView({ report, state }: { report: WhisperReport; state: WhisperState }): React.JSX.Element {
  const f = report.forge;
  const color = LEVEL_COLOR[f.level];
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
          {'  '}ε {eps(f.epsilon_spent)} of {report.config.forge_epsilon} spent · {f.releases} release{f.releases === 1 ? '' : 's'}
        </Text>
      </Box>
      <Text dimColor>
        next round{report.round ? ` (${report.round})` : ''}: {f.speakers_next_round} speak, forge ε → {eps(f.epsilon_after_next_round)}; clip S = {report.config.clip_norm}, σ = {report.config.noise_multiplier}, δ = {delta(report.config.delta)}
      </Text>
      <Box flexDirection="column" marginTop={1}>
        {report.agents.map((a, i) => (
          <AgentRow key={a.agent} a={a} selected={i === state.cursor} />
        ))}
      </Box>
      {state.details && selected ? <Details a={selected} report={report} /> : null}
      {report.notes.map((n) => (
        <Text key={n} color="yellow">
          note: {n}
        </Text>
      ))}
      <Text dimColor>↑/↓ select · enter details · q quit</Text>
    </Box>
  );
}
