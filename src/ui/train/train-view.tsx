import { Box, Text } from 'ink';
import { AGENT_COLOR } from '../../output/theme.js';
import { fmt, type AgentRow as TrainRow, type TrainState } from './use-train-state.js';

const STATUS_COLOR = { waiting: 'gray', training: 'yellow', trained: 'green', skipped: 'gray' } as const;

interface TrainColumn {
  header: string;
  width: number;
  get: (r: TrainRow) => string;
  color?: (r: TrainRow) => string | undefined;
  dim?: boolean;
}

const agent: TrainColumn = { header: 'AGENT', width: 12, get: (r) => r.agent, color: (r) => AGENT_COLOR[r.agent] };
const status: TrainColumn = {
  header: 'STATUS',
  width: 10,
  get: (r) => (r.status === 'trained' ? `v${r.version ?? '?'}` : r.status),
  color: (r) => STATUS_COLOR[r.status],
};
const epoch: TrainColumn = { header: 'EPOCH', width: 9, get: (r) => (r.epochs ? `${r.epoch}/${r.epochs}` : '—') };
const eta: TrainColumn = {
  header: 'ETA',
  width: 8,
  dim: true,
  get: (r) =>
    r.status === 'skipped'
      ? 'skipped'
      : r.etaSec === null
        ? '—'
        : r.status === 'trained'
          ? 'done'
          : `≤ ${Math.ceil(r.etaSec)}s`,
};

/** Every column, at 80 columns and more. */
const FULL: readonly TrainColumn[] = [
  agent,
  status,
  { header: 'EXAMPLES', width: 9, get: (r) => (r.examples === null ? '—' : String(r.examples)) },
  epoch,
  { header: 'TRAIN LOSS', width: 11, get: (r) => fmt(r.trainLoss) },
  { header: 'STOP LOSS', width: 11, get: (r) => fmt(r.stopLoss) },
  { header: 'EX/S', width: 8, get: (r) => (r.examplesPerSec === null ? '—' : String(Math.round(r.examplesPerSec))) },
  eta,
];

/** What matters while waiting, down to the narrowest table. */
const COMPACT: readonly TrainColumn[] = [
  agent,
  status,
  epoch,
  { header: 'LOSS', width: 9, get: (r) => fmt(r.trainLoss) },
  eta,
];

const widthOf = (cols: readonly TrainColumn[]): number => cols.reduce((w, c) => w + c.width, 0);
/** Narrower than this, the command prints progress lines instead of the table. */
export const MIN_TRAIN_COLUMNS = widthOf(COMPACT);

/** The live training table: a row per agent (epoch, losses, examples/s, ETA). Data by props only. */
export function TrainView({
  state,
  color,
  width = 100,
}: {
  state: TrainState;
  color: boolean;
  width?: number;
}): React.JSX.Element {
  const c = (name: string | undefined): string | undefined => (color ? name : undefined);
  const cols = width >= widthOf(FULL) ? FULL : COMPACT;
  return (
    <Box flexDirection="column">
      <Box>
        {cols.map((col) => (
          <Box key={col.header} width={col.width} flexShrink={0}>
            <Text bold>{col.header}</Text>
          </Box>
        ))}
      </Box>
      {state.rows.map((r) => (
        <Box key={r.agent}>
          {cols.map((col) => (
            <Box key={col.header} width={col.width} flexShrink={0}>
              <Text color={c(col.color?.(r))} dimColor={col.dim ?? false} wrap="truncate-end">
                {col.get(r)}
              </Text>
            </Box>
          ))}
        </Box>
      ))}
    </Box>
  );
}
