import { Box, Text } from 'ink';
import type { TierName } from '../../affinity/affinity.js';
import { affinityFor, feltFor, KIND_HELP, RATING_LABEL, RATINGS, type Rating } from '../../feedback/entry.js';
import type { Agent } from '../../memoir/format/agents.js';
import { RESPONSE_KINDS } from '../../memoir/format/sources.js';
import { affinity as fmtAffinity, signedAffinity as signed } from '../../format.js';
import { SYMBOL, type Palette } from '../../output/theme.js';
import { useTerminalSize } from '../use-terminal-size.js';
import { useFeedback } from './use-feedback.js';
import type { FeedbackOutcome, FeedbackState } from './use-feedback-state.js';
import { ScreenFrame } from '../screen-frame.js';
import { MIN_SIZE } from '../terminal.js';

/**
 * The Likert prompt: the proposal (and the player's revision), then one question at a time:
 * how right it felt (1–5), what the player did with it, and an optional comment.
 */
export interface FeedbackSubjectView {
  agent: Agent;
  scene_id: string;
  proposed: string;
  revised: string | null;
  affinity: number;
  tier: TierName;
}

export interface FeedbackViewProps {
  subject: FeedbackSubjectView;
  state: FeedbackState;
  /** Keys are live (the key hints are shown only then). */
  ready?: boolean;
  width: number;
  height: number;
  palette: Palette;
}

function clipLines(text: string, rows: number): { lines: string[]; more: number } {
  const all = text.replace(/\r\n?/g, '\n').replace(/\t/g, '  ').split('\n');
  if (all.length <= rows) return { lines: all, more: 0 };
  const keep = Math.max(1, rows - 1);
  return { lines: all.slice(0, keep), more: all.length - keep };
}

function TextBox({ title, text, rows, p }: { title: string; text: string; rows: number; p: Palette }) {
  const { lines, more } = clipLines(text, rows);
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={p.muted} paddingX={1}>
      <Text color={p.muted}>{title}</Text>
      {lines.map((l, i) => (
        <Text key={i} wrap="truncate-end">
          {l === '' ? ' ' : l}
        </Text>
      ))}
      {more > 0 ? <Text color={p.muted}>{`… ${more} more line${more === 1 ? '' : 's'}`}</Text> : null}
    </Box>
  );
}

/** The scale in one row needs this many columns; narrower, one choice per line keeps each label under its number. */
const SCALE_ROW_WIDTH = RATINGS.reduce((w, r) => w + ` ${r} ${RATING_LABEL[r]} `.length + 2, 0);

function RatingScale({
  state,
  p,
  active,
  width,
}: {
  state: FeedbackState;
  p: Palette;
  active: boolean;
  width: number;
}) {
  const row = width >= SCALE_ROW_WIDTH;
  return (
    <Box flexDirection="column">
      <Text bold={active}>{`How right did it feel?${active ? '' : `  ${state.rating ?? ''}`}`}</Text>
      <Box flexDirection={row ? 'row' : 'column'}>
        {RATINGS.map((r) => {
          const on = state.rating === r;
          return (
            <Box key={r} marginRight={row ? 2 : 0} flexShrink={0}>
              <Text
                inverse={on && p.styled}
                bold={on}
                color={on ? p.accent : active ? undefined : p.muted}
                wrap="truncate-end"
              >
                {on && !p.styled ? `[${r} ${RATING_LABEL[r]}]` : ` ${r} ${RATING_LABEL[r]} `}
              </Text>
            </Box>
          );
        })}
      </Box>
      {state.rating !== null ? <MappingNote rating={state.rating} p={p} /> : null}
    </Box>
  );
}

function MappingNote({ rating, p }: { rating: Rating; p: Palette }) {
  const felt = feltFor(rating);
  const d = affinityFor(rating);
  return <Text color={p.muted}>{`felt ${felt} ${SYMBOL.dot} affinity ${signed(d)}`}</Text>;
}

function KindList({ state, p, active }: { state: FeedbackState; p: Palette; active: boolean }) {
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold={active}>What did you do with it?</Text>
      {RESPONSE_KINDS.map((k, i) => {
        const on = state.kind === k;
        return (
          <Box key={k}>
            <Text color={on ? p.accent : undefined} bold={on}>
              {`${on ? SYMBOL.current : ' '} ${i + 1} ${k.padEnd(9)}`}
            </Text>
            <Text color={p.muted}>{` ${KIND_HELP[k]}`}</Text>
          </Box>
        );
      })}
    </Box>
  );
}

function CommentInput({ state, p }: { state: FeedbackState; p: Palette }) {
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>Comment (optional): Enter to finish</Text>
      <Box>
        <Text color={p.accent}>{'> '}</Text>
        <Text wrap="truncate-start">{state.comment}</Text>
        <Text inverse={p.styled}>{p.styled ? ' ' : '_'}</Text>
      </Box>
    </Box>
  );
}

const STEP_KEYS: Readonly<Record<FeedbackState['step'], string>> = {
  rating: '1–5 or ←→ choose · Enter confirm · Esc skip',
  kind: '1–4 or ↑↓ choose · Enter confirm · Backspace back · Esc skip',
  comment: 'type a comment · Enter finish (empty is fine) · Backspace back · Esc skip',
};

export function FeedbackView({ subject, state, width, height, palette: p, ready = true }: FeedbackViewProps) {
  const textRows = Math.max(2, height - 20);
  const revRows = subject.revised !== null ? Math.max(2, Math.floor(textRows / 2)) : 0;
  const propRows = Math.max(2, textRows - revRows);
  return (
    <Box flexDirection="column" width={width}>
      <Box justifyContent="space-between">
        {/* One Text, so a narrow terminal shortens the scene id, never "Feedback for" or the agent. */}
        <Box flexShrink={1} minWidth={0}>
          <Text wrap="truncate-end">
            <Text bold>{'Feedback for '}</Text>
            <Text bold color={p.agent(subject.agent)}>
              {subject.agent}
            </Text>
            <Text color={p.muted}>{` ${SYMBOL.dot} ${subject.scene_id}`}</Text>
          </Text>
        </Box>
        <Box flexShrink={0} marginLeft={1}>
          <Text color={p.muted}>{`affinity ${fmtAffinity(subject.affinity)} `}</Text>
          <Text color={p.tier(subject.tier)}>{subject.tier}</Text>
        </Box>
      </Box>
      <TextBox title={`${subject.agent} proposed`} text={subject.proposed} rows={propRows} p={p} />
      {subject.revised !== null ? <TextBox title="your revision" text={subject.revised} rows={revRows} p={p} /> : null}
      <RatingScale state={state} p={p} active={state.step === 'rating'} width={width} />
      {state.step !== 'rating' ? <KindList state={state} p={p} active={state.step === 'kind'} /> : null}
      {state.step === 'comment' ? <CommentInput state={state} p={p} /> : null}
      <Box marginTop={1} flexDirection="column">
        {state.hint ? <Text color={p.warn}>{state.hint}</Text> : null}
        <Text color={p.muted} wrap="truncate-end">
          {ready ? STEP_KEYS[state.step] : ' '}
        </Text>
      </Box>
    </Box>
  );
}

export interface FeedbackAppProps {
  subject: FeedbackSubjectView;
  initial: FeedbackState;
  palette: Palette;
  onDone: (outcome: FeedbackOutcome) => void;
  size?: { columns: number; rows: number };
}

/** The Likert prompt wired to its hook: what `kourai feedback` renders. */
export function FeedbackApp({ subject, initial, palette, onDone, size }: FeedbackAppProps) {
  const { columns, rows } = useTerminalSize(size ?? { columns: 100, rows: 30 });
  const { state, ready } = useFeedback(initial, onDone);
  return (
    <ScreenFrame size={{ columns, rows }} min={MIN_SIZE.feedback} name="feedback prompt" palette={palette}>
      <FeedbackView subject={subject} state={state} width={columns} height={rows} palette={palette} ready={ready} />
    </ScreenFrame>
  );
}
