import { Box, Text } from 'ink';
import { CONSENT_MEANING, NEVER_LEAVES } from '../../privacy/consent.js';
import type { ConsentRow, ConsentState } from './use-consent-state.js';

const name = (a: string): string => a.charAt(0).toUpperCase() + a.slice(1);

function StanceRow({ row, selected }: { row: ConsentRow; selected: boolean }): React.JSX.Element {
  const box = row.locked ? '[–]' : row.allowed ? '[x]' : '[ ]';
  return (
    <Box flexDirection="column">
      <Box>
        <Box width={2}>
          <Text color="cyan">{selected ? '›' : ' '}</Text>
        </Box>
        <Text color={row.locked ? 'gray' : row.allowed ? 'green' : undefined}>{box} </Text>
        <Text bold={!row.locked} dimColor={row.locked}>
          {name(row.agent)} {row.role}
        </Text>
        {row.locked ? <Text dimColor> · bond-only, locked</Text> : null}
      </Box>
      <Box marginLeft={6}>
        <Text dimColor={row.locked} italic>
          “{row.line}”
        </Text>
      </Box>
    </Box>
  );
}

function Summary({ state }: { state: ConsentState }): React.JSX.Element {
  const speak = state.rows.filter((r) => !r.locked && r.allowed).map((r) => name(r.agent));
  const silent = state.rows.filter((r) => !r.locked && !r.allowed).map((r) => name(r.agent));
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>May speak for the forge: {speak.length ? <Text color="green">{speak.join(', ')}</Text> : <Text color="yellow">nobody</Text>}</Text>
      <Text>Stay silent: {silent.length ? silent.join(', ') : 'nobody'}; Cupid and Puck never speak.</Text>
      <Box flexDirection="column" marginTop={1}>
        <Text underline>What consent means</Text>
        {CONSENT_MEANING.map((l) => (
          <Text key={l}>· {l}</Text>
        ))}
      </Box>
      <Box flexDirection="column" marginTop={1}>
        <Text underline>What never leaves the forge</Text>
        {NEVER_LEAVES.map((l) => (
          <Text key={l}>· {l}</Text>
        ))}
      </Box>
      <Text dimColor>enter/y confirm · esc/b back</Text>
    </Box>
  );
}

/** The Sovereignty Moment. Data by props only; the command stores the decision. */
export function ConsentView({ state }: { state: ConsentState }): React.JSX.Element {
  if (state.step === 'confirmed') return <Text color="green">Consent recorded. It applies from the next federation round.</Text>;
  if (state.step === 'cancelled') return <Text color="yellow">Cancelled: nothing was changed.</Text>;
  if (state.step === 'confirm') {
    return (
      <Box flexDirection="column">
        <Text bold>The Sovereignty Moment — your choice</Text>
        <Summary state={state} />
      </Box>
    );
  }
  return (
    <Box flexDirection="column">
      <Text bold>The Sovereignty Moment</Text>
      <Text dimColor>The forge may join the council. Each agent speaks; you decide who may speak for the forge.</Text>
      <Box flexDirection="column" marginTop={1}>
        {state.rows.map((r, i) => (
          <StanceRow key={r.agent} row={r} selected={i === state.cursor} />
        ))}
      </Box>
      {state.notice ? <Text color="yellow">{state.notice}</Text> : null}
      <Text dimColor>↑/↓ move · space toggle · a all · n none · enter continue · esc cancel</Text>
    </Box>
  );
}
