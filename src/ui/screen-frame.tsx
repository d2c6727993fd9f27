import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import type { Palette } from '../output/theme.js';
import type { ScreenSize } from './terminal.js';

/**
 * Every screen's outer box. It takes exactly the terminal's height less one row (Ink redraws in
 * place below that; nothing scrolls away), clipping what does not fit; when the terminal is
 * smaller than the screen needs — at start or after a resize — it says what it needs instead,
 * until the terminal grows again. Keys keep working meanwhile (q leaves, Ctrl-C cancels).
 */
export function ScreenFrame({
  size,
  min,
  name,
  palette: p,
  children,
}: {
  size: ScreenSize;
  min: ScreenSize;
  name: string;
  palette: Palette;
  children: ReactNode;
}) {
  if (size.columns < min.columns || size.rows < min.rows) {
    return (
      <Box flexDirection="column" width={Math.max(1, size.columns)}>
        <Text
          color={p.warn}
        >{`The terminal is ${size.columns}×${size.rows}; the ${name} needs at least ${min.columns}×${min.rows}.`}</Text>
        <Text color={p.muted}>Enlarge the window to go on; q leaves, Ctrl-C cancels.</Text>
      </Box>
    );
  }
  return (
    <Box flexDirection="column" width={size.columns} height={Math.max(1, size.rows - 1)} overflow="hidden">
      {/* Not shrunk to fit: laid out at its own height, and what is below the last row is cut. */}
      <Box flexDirection="column" flexShrink={0}>
        {children}
      </Box>
    </Box>
  );
}
