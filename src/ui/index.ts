/**
 * The Ink screens, one folder per screen, and what they share:
 *   keys.ts                 the key bindings of every screen (read by the mappers, the help and the README)
 *   mount.tsx               runs one screen on the command's streams until it finishes
 *   screen-frame.tsx        every screen's outer box, sized to the terminal
 *   terminal.ts             the size check before a screen starts (no Ink loaded)
 *   use-outcome-keys.ts     keys to a reducer until the screen has an outcome
 *   use-terminal-size.ts    the terminal's size, following resizes
 *   consent/                the Sovereignty Moment
 *   council/                the Council of Sisters and the Stoa Falls
 *   feedback/               the Likert prompt
 *   replay/                 the memoir replayed as a story
 *   train/                  the live training display
 *   whisper/                the Whisper Limit gauge
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
