import { Box, Text } from 'ink';
import type { Palette } from '../../output/theme.js';
import { CONSENT_MEANING, NEVER_LEAVES } from '../../privacy/consent.js';
import { keyLabel, CONSENT_KEYS, type ConsentKeyAction } from '../keys.js';
import type { ConsentRow, ConsentState } from './use-consent-state.js';

const name = (a: string): string => a.charAt(0).toUpperCase() + a.slice(1);

/** Key hints for a step, from the same table the keys are handled by. */
function hints(actions: readonly ConsentKeyAction[], words: Partial<Record<ConsentKeyAction, string>>): string {
  return actions
    .map((a) => {
      const b = CONSENT_KEYS.find((x) => x.action === a);
      return b ? `${b.keys.map(keyLabel).join('/')} ${words[a] ?? a}` : '';
    })
    .filter(Boolean)
    .join(' · ');
}
const CHOOSE_HINTS = hints(['up', 'down', 'toggle', 'allowAll', 'allowNone', 'enter', 'leave'], {
  toggle: 'toggle',
  allowAll: 'all',
  allowNone: 'none',
  enter: 'summary',
  leave: 'leave',
});
const CONFIRM_HINTS =
  hints(['enter', 'confirm', 'back'], { enter: 'confirm', confirm: 'confirm', back: 'back' }) + ' · Esc back';

/** One line per agent; the selected agent's stance is quoted under the list (the scene fits 24 rows). */
function StanceRow({ row, selected, p }: { row: ConsentRow; selected: boolean; p: Palette }) {
  const box = row.locked ? '[–]' : row.allowed ? '[x]' : '[ ]';
  return (
    <Box>
      <Box width={2}>
        <Text color={p.accent}>{selected ? '›' : ' '}</Text>
      </Box>
      <Text color={row.locked ? p.muted : row.allowed ? p.ok : undefined}>{box} </Text>
      <Text bold={!row.locked && p.styled} color={row.locked ? p.muted : undefined}>
        {name(row.agent)} {row.role}
      </Text>
      {row.locked ? <Text color={p.muted}> · bond-only, locked</Text> : null}
    </Box>
  );
}

function Summary({ state, p }: { state: ConsentState; p: Palette }) {
  const speak = state.rows.filter((r) => !r.locked && r.allowed).map((r) => name(r.agent));
  const silent = state.rows.filter((r) => !r.locked && !r.allowed).map((r) => name(r.agent));
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold={p.styled}>
        May speak for the forge:{' '}
        {speak.length ? <Text color={p.ok}>{speak.join(', ')}</Text> : <Text color={p.warn}>nobody</Text>}
      </Text>
      <Text>Stay silent: {silent.length ? silent.join(', ') : 'nobody'}; Cupid and Puck never speak.</Text>
      <Box flexDirection="column" marginTop={1}>
        <Text underline={p.styled}>What consent means</Text>
        {CONSENT_MEANING.map((l) => (
          <Text key={l}>· {l}</Text>
        ))}
      </Box>
      <Box flexDirection="column" marginTop={1}>
        <Text underline={p.styled}>What never leaves the forge</Text>
        {NEVER_LEAVES.map((l) => (
          <Text key={l}>· {l}</Text>
        ))}
      </Box>
      <Text color={p.muted}>{CONFIRM_HINTS}</Text>
    </Box>
  );
}

/** The Sovereignty Moment. Data by props only; the command stores the decision. */
export function ConsentView({ state, palette: p }: { state: ConsentState; palette: Palette }) {
  if (state.step === 'confirmed')
    return <Text color={p.ok}>Consent recorded. It applies from the next federation round.</Text>;
  if (state.step === 'cancelled' || state.step === 'left') return <Text color={p.warn}>Nothing was changed.</Text>;
  if (state.step === 'confirm') {
    return (
      <Box flexDirection="column">
        <Text bold={p.styled}>The Sovereignty Moment — your choice</Text>
        <Summary state={state} p={p} />
      </Box>
    );
  }
  const selected = state.rows[state.cursor];
  return (
    <Box flexDirection="column">
      <Text bold={p.styled}>The Sovereignty Moment</Text>
      <Text color={p.muted}>
        The forge may join the council. Each agent speaks; you decide who may speak for the forge.
      </Text>
      <Box flexDirection="column" marginTop={1}>
        {state.rows.map((r, i) => (
          <StanceRow key={r.agent} row={r} selected={i === state.cursor} p={p} />
        ))}
      </Box>
      {selected ? (
        <Box marginTop={1} marginLeft={2}>
          <Text italic={p.styled} color={selected.locked ? p.muted : undefined}>
            {`${name(selected.agent)}: “${selected.line}”`}
          </Text>
        </Box>
      ) : null}
      {state.notice ? <Text color={p.warn}>{state.notice}</Text> : <Text> </Text>}
      <Text color={p.muted}>{CHOOSE_HINTS}</Text>
    </Box>
  );
}
