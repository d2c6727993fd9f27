import { useApp } from 'ink';
import { useEffect } from 'react';
import type { WhisperReport } from '../../privacy/whisper-report.js';
import { useWhisper } from './use-whisper.js';
import { WhisperView } from './whisper-view.js';

/** The gauge wired to its keys: exits when the player closes it. */
export function WhisperApp({ report, onExit }: { report: WhisperReport; onExit?: () => void }): React.JSX.Element {
  const state = useWhisper(report.agents.length);
  const { exit } = useApp();
  useEffect(() => {
    if (state.done) {
      onExit?.();
      exit();
    }
  }, [state.done, exit, onExit]);
  return <WhisperView report={report} state={state} />;
}
