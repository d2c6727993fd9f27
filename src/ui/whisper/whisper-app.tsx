import { useEffect } from 'react';
import type { Palette } from '../../output/theme.js';
import type { WhisperReport } from '../../privacy/whisper-report.js';
import { ScreenFrame } from '../screen-frame.js';
import { MIN_SIZE, type ScreenSize } from '../terminal.js';
import { useTerminalSize } from '../use-terminal-size.js';
import { useWhisper } from './use-whisper.js';
import { WhisperView } from './whisper-view.js';

/** The gauge wired to its keys: calls onDone once, when the player quits (q, Esc) or cancels (Ctrl-C). */
export function WhisperApp({
  report,
  palette,
  onDone,
  size,
}: {
  report: WhisperReport;
  palette: Palette;
  onDone: (how: 'quit' | 'cancel') => void;
  size?: ScreenSize;
}): React.JSX.Element {
  const current = useTerminalSize(size ?? { columns: 100, rows: 30 });
  const state = useWhisper(report.agents.length);
  useEffect(() => {
    if (state.done) onDone(state.done);
    // Fires once when the screen is done; onDone is not a dependency (a new closure must not re-fire it).
  }, [state.done]);
  return (
    <ScreenFrame size={current} min={MIN_SIZE.whisper} name="Whisper Limit gauge" palette={palette}>
      <WhisperView report={report} state={state} palette={palette} />
    </ScreenFrame>
  );
}
