import { Box, Text } from 'ink';
import { useMemo } from 'react';
import { tierOf } from '../../affinity/affinity.js';
import { AGENTS } from '../../memoir/format/agents.js';
import { affinity as fmtAffinity, count, signedAffinity as signed } from '../../format.js';
import { beatTitle, visibilityNote } from '../../replay/describe.js';
import type { AffinityTotals, Beat, StoryNav } from '../../replay/story.js';
import { keyLabel, REPLAY_KEYS } from '../keys.js';
import { SYMBOL, type Palette } from '../../output/theme.js';
import { useTerminalSize } from '../use-terminal-size.js';
import { useReplay } from './use-replay.js';
import { replayFrame, SPEEDS, type ReplayFrame, type ReplayState, type TextIndexBuild } from './use-replay-state.js';
import type { TextIndexBuilder } from '../../memoir-index/indexed.js';
import { ScreenFrame } from '../screen-frame.js';
import { MIN_SIZE } from '../terminal.js';

/**
 * The replay screen: a header (session, position), the current scene's beats around the current
 * one, the current beat in full, the per-agent affinity line and a status line. Data comes by
 * props; the story is read through StoryNav by the hook, never opened here.
 */
export interface ReplayViewProps {
  frame: ReplayFrame;
  state: ReplayState;
  /** Keys are live (the key hints are shown only then). */
  ready?: boolean;
  width: number;
  height: number;
  palette: Palette;
}

/** Rows given to the scene panel and to the proposal text for a terminal height. */
export function layoutFor(height: number): { sceneRows: number; textRows: number } {
  const sceneRows = Math.max(3, Math.min(9, Math.floor((height - 14) / 3)));
  const textRows = Math.max(2, height - 18 - sceneRows);
  return { sceneRows, textRows };
}

function clip(text: string, rows: number): { lines: string[]; more: number } {
  const all = text.replace(/\r\n?/g, '\n').replace(/\t/g, '  ').split('\n');
  if (all.length <= rows) return { lines: all, more: 0 };
  return { lines: all.slice(0, Math.max(1, rows - 1)), more: all.length - Math.max(1, rows - 1) };
}

function Block({
  label,
  text,
  rows,
  p,
  color,
}: {
  label: string;
  text: string;
  rows: number;
  p: Palette;
  color?: string | undefined;
}) {
  const { lines, more } = clip(text, rows);
  return (
    <Box flexDirection="row">
      <Box width={9} flexShrink={0}>
        <Text color={p.muted}>{label}</Text>
      </Box>
      <Box flexDirection="column" flexGrow={1}>
        {lines.map((l, i) => (
          <Text key={i} wrap="truncate-end" color={color}>
            {l === '' ? ' ' : l}
          </Text>
        ))}
        {more > 0 ? <Text color={p.muted}>{`… ${more} more line${more === 1 ? '' : 's'}`}</Text> : null}
      </Box>
    </Box>
  );
}

function AgentName({ agent, p }: { agent: Beat['agent']; p: Palette }) {
  return (
    <Text color={p.agent(agent)} bold>
      {agent}
    </Text>
  );
}

function SceneLine({ b, current, p }: { b: Beat; current: boolean; p: Palette }) {
  const title = b.interrupt
    ? `${SYMBOL.interrupt} ${beatTitle(b)}${b.interrupt.shown_to_player ? '' : ` (${SYMBOL.silent} silent)`}`
    : beatTitle(b);
  return (
    <Box>
      <Box width={2} flexShrink={0}>
        <Text color={p.accent}>{current ? SYMBOL.current : ' '}</Text>
      </Box>
      <Box width={12} flexShrink={0}>
        <Text color={p.agent(b.agent)} bold={current}>
          {b.agent}
        </Text>
      </Box>
      <Box flexGrow={1}>
        <Text wrap="truncate-end" bold={current} dimColor={!current && p.styled}>
          {title}
        </Text>
      </Box>
      {b.affinity_delta !== 0 ? (
        <Box width={8} flexShrink={0} justifyContent="flex-end">
          <Text color={p.delta(b.affinity_delta)}>{signed(b.affinity_delta)}</Text>
        </Box>
      ) : null}
    </Box>
  );
}

function BeatDetail({ b, affinity, textRows, p }: { b: Beat; affinity: AffinityTotals; textRows: number; p: Palette }) {
  const after = affinity[b.agent] ?? 0;
  const tags = [b.source.replace(/_/g, ' '), b.entry_type.replace(/_/g, ' '), b.shared ? 'shared' : 'private'].join(
    ` ${SYMBOL.dot} `,
  );
  const half = Math.max(2, Math.floor(textRows / 2));
  return (
    <Box flexDirection="column">
      <Box>
        <AgentName agent={b.agent} p={p} />
        <Text>{` ${SYMBOL.dot} `}</Text>
        <Text bold wrap="truncate-end">
          {beatTitle(b)}
        </Text>
      </Box>
      <Text color={p.muted} wrap="truncate-end">
        {`${tags}${b.narrative_beat ? ` ${SYMBOL.dot} ${b.narrative_beat}` : ''}`}
      </Text>
      {b.interrupt ? (
        <Box>
          <Text>{`${SYMBOL.interrupt} `}</Text>
          <AgentName agent={b.interrupt.by} p={p} />
          <Text>{' broke in on '}</Text>
          <AgentName agent={b.interrupt.target} p={p} />
          <Text>{` ${SYMBOL.dot} ${b.interrupt.reason} ${SYMBOL.dot} `}</Text>
          <Text color={b.interrupt.shown_to_player ? undefined : p.warn} bold={!b.interrupt.shown_to_player}>
            {visibilityNote(b.interrupt.visibility)}
          </Text>
        </Box>
      ) : null}
      {b.proposed !== null ? (
        <Block label="says" text={b.proposed} rows={b.response?.delta ? half : textRows} p={p} />
      ) : null}
      {b.response ? (
        <Box>
          <Box width={9} flexShrink={0}>
            <Text color={p.muted}>player</Text>
          </Box>
          <Text>{b.response.kind}</Text>
          <Text>{` ${SYMBOL.dot} `}</Text>
          <Text color={p.felt(b.response.felt)}>{b.response.felt ? `felt ${b.response.felt}` : 'felt —'}</Text>
          {b.likert !== null ? <Text>{` ${SYMBOL.dot} rated ${b.likert}/5`}</Text> : null}
        </Box>
      ) : null}
      {b.response?.delta ? <Block label="revised" text={b.response.delta} rows={half} p={p} /> : null}
      {b.comment ? <Block label="comment" text={b.comment} rows={2} p={p} /> : null}
      {b.affinity_delta !== 0 ? (
        <Box>
          <Box width={9} flexShrink={0}>
            <Text color={p.muted}>affinity</Text>
          </Box>
          <Text color={p.delta(b.affinity_delta)}>{signed(b.affinity_delta)}</Text>
          <Text>{` ${SYMBOL.arrow} ${b.agent} ${fmtAffinity(after)} `}</Text>
          <Text color={p.tier(tierOf(after))}>{tierOf(after)}</Text>
        </Box>
      ) : null}
      <Text color={p.muted} wrap="truncate-end">
        {`${b.entry_id}${b.recorded_at ? ` ${SYMBOL.dot} ${b.recorded_at}` : ''}${b.supersedes ? ` ${SYMBOL.dot} revises ${b.supersedes}` : ''}`}
      </Text>
    </Box>
  );
}

function AffinityBar({ affinity, p }: { affinity: AffinityTotals; p: Palette }) {
  const agents = AGENTS.filter((a) => affinity[a] !== undefined);
  return (
    <Box flexWrap="wrap">
      <Text color={p.muted}>{'affinity  '}</Text>
      {agents.length === 0 ? <Text color={p.muted}>no changes yet</Text> : null}
      {agents.map((a) => (
        <Box key={a} marginRight={2}>
          <Text color={p.agent(a)}>{a}</Text>
          <Text>{` ${fmtAffinity(affinity[a] ?? 0)}`}</Text>
        </Box>
      ))}
    </Box>
  );
}

const HELP_KEY_WIDTH = 14;

/** One line per binding (two where its text wraps); what does not fit the rows given is counted, not cut. */
export function helpLines(width: number): number[] {
  const text = Math.max(10, width - 4 - HELP_KEY_WIDTH);
  return REPLAY_KEYS.map((b) => Math.ceil(b.help.length / text));
}

function Help({ p, width, rows }: { p: Palette; width: number; rows: number }) {
  // Border (2), the title and the closing line.
  let budget = rows - 4;
  const shown = REPLAY_KEYS.filter((_, i) => {
    budget -= helpLines(width)[i] ?? 1;
    return budget >= 0;
  });
  const hidden = REPLAY_KEYS.length - shown.length;
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={p.accent} paddingX={1}>
      <Text bold>keys</Text>
      {shown.map((b) => (
        <Box key={b.action}>
          <Box width={HELP_KEY_WIDTH} flexShrink={0}>
            <Text color={p.accent}>{b.keys.map(keyLabel).join(' ')}</Text>
          </Box>
          <Text>{b.help}</Text>
        </Box>
      ))}
      <Text color={p.muted}>
        {hidden > 0 ? `… ${hidden} more in a taller terminal · ? or Esc closes` : '? or Esc closes this help'}
      </Text>
    </Box>
  );
}

const MB = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;

/**
 * The gauge shown while a search waits on the full-text index (two lines): how far, and how to stop
 * it, first (it fits the narrowest screen, 60 columns); then the bytes read and the waiting search.
 */
export function textIndexGauge(b: TextIndexBuild, width: number): [string, string] {
  const share = b.total > 0 ? Math.min(1, b.done / b.total) : 0;
  const cells = Math.max(10, Math.min(30, width - 50));
  const filled = Math.round(share * cells);
  const gauge = `building the full-text index ${'█'.repeat(filled)}${'░'.repeat(cells - filled)} ${Math.floor(share * 100)}% ${SYMBOL.dot} ${b.cancelling ? 'stopping…' : 'Esc cancels'}`;
  const read = b.total > 0 ? `${MB(b.done)} of ${MB(b.total)} read; ` : '';
  return [gauge, `${read}the search "${b.query}" runs once it is built (only the first search builds it)`];
}

/** The status parts joined by dots; the optional ones (key hints) are dropped from the end until the line fits. */
function fitParts(width: number, parts: readonly string[], optional: readonly string[]): string {
  const all = [...parts, ...optional];
  for (let n = all.length; n > parts.length; n--) {
    const line = all.slice(0, n).join(` ${SYMBOL.dot} `);
    if (line.length <= width) return line;
  }
  return parts.join(` ${SYMBOL.dot} `);
}

function StatusLine({
  state,
  frame,
  p,
  ready,
  width,
}: {
  state: ReplayState;
  frame: ReplayFrame;
  p: Palette;
  ready: boolean;
  width: number;
}) {
  if (state.building) {
    const [gauge, detail] = textIndexGauge(state.building, width);
    return (
      <Box flexDirection="column">
        <Text color={p.accent} wrap="truncate-end">
          {gauge}
        </Text>
        <Text color={p.muted} wrap="truncate-end">
          {detail}
        </Text>
      </Box>
    );
  }
  if (state.overlay === 'search' || state.overlay === 'jump') {
    return (
      <Box>
        <Text color={p.accent}>{state.overlay === 'search' ? 'search: ' : 'entry id: '}</Text>
        <Text>{state.input}</Text>
        <Text inverse> </Text>
        <Text color={p.muted}>{'   Enter go · Esc cancel'}</Text>
      </Box>
    );
  }
  const play = state.playing ? `${SYMBOL.play} playing` : `${SYMBOL.pause} paused`;
  const filter = state.filter.agents.length ? state.filter.agents.join(',') : 'all agents';
  return (
    <Box flexDirection="column">
      {state.message ? (
        <Text color={state.message.tone === 'warn' ? p.warn : p.accent}>{state.message.text}</Text>
      ) : (
        <Text> </Text>
      )}
      <Text color={p.muted} wrap="truncate-end">
        {fitParts(
          width,
          [
            `${play} ${count(SPEEDS[state.speed] ?? 1, 'beat')}/s`,
            filter,
            `beat ${frame.total ? frame.position + 1 : 0}/${frame.total}`,
          ],
          ready ? ['? help', 'q quit'] : [],
        )}
      </Text>
    </Box>
  );
}

export function ReplayView({ frame, state, width, height, palette: p, ready = true }: ReplayViewProps) {
  const { textRows } = layoutFor(height);
  const s = frame.session;
  const b = frame.beat;
  return (
    <Box flexDirection="column" width={width}>
      <Box justifyContent="space-between">
        <Box flexShrink={1} minWidth={0}>
          <Text bold color={p.accent} wrap="truncate-end">
            {`kourai replay${s ? ` ${SYMBOL.dot} session ${s.session.slice(0, 8)} (${s.rank + 1}/${frame.sessions})` : ''}${s?.player && s.project ? ` ${SYMBOL.dot} ${s.player}/${s.project}` : ''}`}
          </Text>
        </Box>
        <Box flexShrink={0} marginLeft={1}>
          <Text color={p.muted}>{frame.total ? `${frame.position + 1}/${frame.total}` : '0/0'}</Text>
        </Box>
      </Box>
      {state.overlay === 'help' ? <Help p={p} width={width} rows={height - 3} /> : null}
      {state.overlay === 'help' ? null : b && frame.scene ? (
        <>
          <Text bold wrap="truncate-end">{`scene ${b.scene_id}`}</Text>
          <Box flexDirection="column" marginLeft={1} marginY={1}>
            {frame.scene.before > 0 ? (
              <Text color={p.muted}>{`  … ${frame.scene.before} earlier in this scene`}</Text>
            ) : null}
            {frame.scene.beats.map((x, i) => (
              <SceneLine key={`${x.ref.session}:${x.ref.line}`} b={x} current={i === frame.scene?.current} p={p} />
            ))}
            {frame.scene.after > 0 ? (
              <Text color={p.muted}>{`  … ${frame.scene.after} later in this scene`}</Text>
            ) : null}
          </Box>
        </>
      ) : (
        <Text color={p.muted}>nothing to replay</Text>
      )}
      {state.overlay === 'help' ? null : b ? (
        <BeatDetail b={b} affinity={frame.affinity} textRows={textRows} p={p} />
      ) : null}
      {state.overlay === 'help' ? null : (
        <Box marginTop={1}>
          <AffinityBar affinity={frame.affinity} p={p} />
        </Box>
      )}
      <StatusLine state={state} frame={frame} p={p} ready={ready} width={width} />
    </Box>
  );
}

export interface ReplayAppProps {
  nav: StoryNav;
  initial: ReplayState;
  palette: Palette;
  onDone: (how: 'quit' | 'cancel', last: ReplayState) => void;
  /** Size used when the output stream does not report one. */
  size?: { columns: number; rows: number };
  /** Builds the full-text index the first search needs (when `initial.needsTextIndex`). */
  textIndex?: TextIndexBuilder;
}

/** The replay screen wired to its hook: what `kourai memoir replay` renders. */
export function ReplayApp({ nav, initial, palette: p, onDone, size, textIndex }: ReplayAppProps) {
  const { columns, rows } = useTerminalSize(size ?? { columns: 100, rows: 30 });
  const { state, ready } = useReplay(nav, initial, onDone, true, textIndex);
  const sceneRows = layoutFor(rows).sceneRows;
  const frame = useMemo(() => replayFrame(nav, state, sceneRows), [nav, state.ref, state.filter, sceneRows]);
  return (
    <ScreenFrame size={{ columns, rows }} min={MIN_SIZE.replay} name="replay screen" palette={p}>
      <ReplayView frame={frame} state={state} width={columns} height={rows} palette={p} ready={ready} />
    </ScreenFrame>
  );
}
