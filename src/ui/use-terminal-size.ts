import { useEffect, useState } from 'react';
import { useStdout } from 'ink';

/** The terminal's size, following resizes (falls back to the given size when unknown). */
export function useTerminalSize(fallback: { columns: number; rows: number }): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = (): { columns: number; rows: number } => ({
    columns: stdout.columns > 0 ? stdout.columns : fallback.columns,
    rows: stdout.rows > 0 ? stdout.rows : fallback.rows,
  });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = (): void => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
    // `read` only reads the stream, which is the dependency.
  }, [stdout]);
  return size;
}
