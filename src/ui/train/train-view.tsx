import { Box, Text } from 'ink';
import { AGENT_COLOR } from '../../output/theme.js';
import { fmt, type TrainState } from './use-train-state.js';

const STATUS_COLOR = { waiting: 'gray', training: 'yellow', trained: 'green', skipped: 'gray' } as const;

/** The live training table: a row per agent (epoch, losses, examples/s, ETA). Data by props only. */
export function TrainView({ state, color }: { state: TrainState; color: boolean }): React.JSX.Element {
  const c = (name: string | undefined): string | undefined => (color ? name : undefined);
  return (
    <Box flexDirection="column">
      <Box>
        <Box width={12}><Text bold>AGENT</Text></Box>
        <Box width={10}><Text bold>STATUS</Text></Box>
        <Box width={9}><Text bold>EXAMPLES</Text></Box>
        <Box width={10}><Text bold>EPOCH</Text></Box>
        <Box width={11}><Text bold>TRAIN LOSS</Text></Box>
        <Box width={11}><Text bold>STOP LOSS</Text></Box>
        <Box width={8}><Text bold>EX/S</Text></Box>
        <Box width={10}><Text bold>ETA</Text></Box>
      </Box>
      {state.rows.map((r) => (
        <Box key={r.agent}>
          <Box width={12}><Text color={c(AGENT_COLOR[r.agent])}>{r.agent}</Text></Box>
          <Box width={10}><Text color={c(STATUS_COLOR[r.status])}>{r.status === 'trained' ? `v${r.version ?? '?'}` : r.status}</Text></Box>
          <Box width={9}><Text>{r.examples ?? '—'}</Text></Box>
          <Box width={10}><Text>{r.epochs ? `${r.epoch}/${r.epochs}` : '—'}</Text></Box>
          <Box width={11}><Text>{fmt(r.trainLoss)}</Text></Box>
          <Box width={11}><Text>{fmt(r.stopLoss)}</Text></Box>
          <Box width={8}><Text>{r.examplesPerSec === null ? '—' : Math.round(r.examplesPerSec)}</Text></Box>
          <Box width={10}><Text dimColor>{r.status === 'skipped' ? (r.reason ?? '').slice(0, 40) : r.etaSec === null ? '—' : r.status === 'trained' ? 'done' : `≤ ${Math.ceil(r.etaSec)}s`}</Text></Box>
        </Box>
      ))}
    </Box>
  );
}
