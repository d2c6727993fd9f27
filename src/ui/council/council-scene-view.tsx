import { Box, Text } from 'ink';
import type { CouncilScene, SceneLine } from '../../federation/round/scenes.js';
import { keyLabel, COUNCIL_SCENE_KEYS } from '../keys.js';
import type { Palette } from '../../output/theme.js';
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

export function CouncilSceneView({ state, ready, palette: p }: CouncilSceneViewProps) {
  const scene: CouncilScene | undefined = state.scenes[state.scene];
  if (!scene) return <Text color={p.muted}>No council scene to show.</Text>;
  const lines = scene.lines.slice(0, state.shown);
  const hints = COUNCIL_SCENE_KEYS.filter((b) => b.action !== 'cancel').map(
    (b) => `${keyLabel(b.keys[0] as string)} ${b.action === 'next' ? 'next' : b.action === 'prev' ? 'back' : 'skip'}`,
  );
  return (
    <Box flexDirection="column">
      <Text bold color={p.accent}>
        {scene.title}
      </Text>
      <Text
        color={p.muted}
      >{`${state.scene + 1}/${state.scenes.length} · line ${state.shown}/${scene.lines.length}`}</Text>
      <Box flexDirection="column" marginTop={1}>
        {lines.map((l, i) => (
          <Line key={i} line={l} p={p} current={i === lines.length - 1} />
        ))}
      </Box>
      {ready ? <Text color={p.muted}>{hints.join('   ')}</Text> : null}
    </Box>
  );
}

export function CouncilSceneApp({
  scenes,
  palette,
  onDone,
}: {
  scenes: readonly CouncilScene[];
  palette: Palette;
  onDone: (o: SceneOutcome) => void;
}) {
  const { state, ready } = useCouncilScene(scenes, onDone);
  return <CouncilSceneView state={state} ready={ready} palette={palette} />;
}
