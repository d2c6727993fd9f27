import { Box, Text } from 'ink';
import type { CouncilScene, SceneLine } from '../../federation/round/scenes.js';
import { keyLabel, COUNCIL_SCENE_KEYS } from '../keys.js';
import type { Palette } from '../../output/theme.js';
import { ScreenFrame } from '../screen-frame.js';
import { MIN_SIZE, type ScreenSize } from '../terminal.js';
import { useTerminalSize } from '../use-terminal-size.js';
import { useCouncilScene } from './use-council-scene.js';
import type { CouncilSceneState, SceneOutcome } from './use-council-scene-state.js';

/**
 * The Council of Sisters (or the Stoa Falls): the scene's lines appear one at a time; the speaker
 * in her colour, the figures her line rests on dimmed below it.
 */
export interface CouncilSceneViewProps {
  state: CouncilSceneState;
  ready: boolean;
  palette: Palette;
  /** The rows the screen may use: the title, position and keys stay; the oldest lines give way. */
  height?: number;
}

const name = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

function Line({ line, p, current }: { line: SceneLine; p: Palette; current: boolean }) {
  return (
    <Box flexDirection="column" marginBottom={1}>
      {line.speaker === 'narrator' ? (
        <Text italic={p.styled} color={p.muted}>
          {line.text}
        </Text>
      ) : (
        <Text>
          <Text bold color={p.agent(line.speaker)}>
            {name(line.speaker)}
          </Text>
          <Text bold={current && p.styled}>{`  ${line.text}`}</Text>
        </Text>
      )}
      {line.facts ? <Text color={p.muted}>{`    (${line.facts})`}</Text> : null}
    </Box>
  );
}

export function CouncilSceneView({ state, ready, palette: p, height }: CouncilSceneViewProps) {
  const scene: CouncilScene | undefined = state.scenes[state.scene];
  if (!scene) return <Text color={p.muted}>No council scene to show.</Text>;
  const lines = scene.lines.slice(0, state.shown);
  const hints = COUNCIL_SCENE_KEYS.filter((b) => b.action !== 'cancel').map(
    (b) => `${keyLabel(b.keys[0] as string)} ${b.action === 'next' ? 'next' : b.action === 'prev' ? 'back' : 'skip'}`,
  );
  // The lines sit at the bottom of their box: when they are taller than it, the oldest are cut at
  // the top and the newest stays in view (the scene never grows past the terminal).
  return (
    <Box flexDirection="column" {...(height !== undefined ? { height } : {})}>
      <Box flexDirection="column" flexShrink={0}>
        <Text bold color={p.accent}>
          {scene.title}
        </Text>
        <Text
          color={p.muted}
        >{`${state.scene + 1}/${state.scenes.length} · line ${state.shown}/${scene.lines.length}`}</Text>
      </Box>
      <Box
        flexDirection="column"
        marginTop={1}
        flexGrow={1}
        flexShrink={1}
        overflow="hidden"
        justifyContent={height !== undefined ? 'flex-end' : 'flex-start'}
      >
        {lines.map((l, i) => (
          <Box key={i} flexShrink={0}>
            <Line line={l} p={p} current={i === lines.length - 1} />
          </Box>
        ))}
      </Box>
      <Box flexShrink={0}>
        <Text color={p.muted}>{ready ? hints.join('   ') : ' '}</Text>
      </Box>
    </Box>
  );
}

export function CouncilSceneApp({
  scenes,
  palette,
  onDone,
  size,
}: {
  scenes: readonly CouncilScene[];
  palette: Palette;
  onDone: (o: SceneOutcome) => void;
  size?: ScreenSize;
}) {
  const current = useTerminalSize(size ?? { columns: 100, rows: 30 });
  const { state, ready } = useCouncilScene(scenes, onDone);
  return (
    <ScreenFrame size={current} min={MIN_SIZE.council} name="council scene" palette={palette}>
      <CouncilSceneView state={state} ready={ready} palette={palette} height={Math.max(1, current.rows - 1)} />
    </ScreenFrame>
  );
}
