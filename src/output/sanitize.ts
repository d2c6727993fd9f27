/**
 * The one rule for what human output may send to a terminal. Memoir text, file names and error
 * messages can hold escape sequences (`\u001b[2J` clears the screen, `\u001b]0;…\u0007` sets
 * the window title); printed raw, they act on the operator's terminal. Every human output path
 * (command renders, notes and warnings, error lines, the text replay, Ink screens) passes its
 * text through here; `--json` output needs nothing (JSON escapes control characters).
 *
 * Kept: newline, tab, and — only when colour is on — the SGR colour/weight sequences our one
 * Chalk instance writes. Everything else that is a control character (C0 except \n \t, DEL, C1,
 * and the bidirectional overrides that reorder what is displayed) is shown as a visible symbol.
 */

// C0 except \t (09) and \n (0a), DEL, C1, and the bidi embeddings, overrides and isolates.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const SGR_OR_CONTROL = /\u001b\[([0-9;]*)m|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** SGR parameters that only blink or hide text: never ours, never kept. */
const UNSAFE_SGR = new Set(['5', '6', '8']);

/** A control character as a visible, single-column symbol: ␛ for ESC, ␇ for BEL, ␡ for DEL. */
export function visibleControl(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x20) return String.fromCodePoint(0x2400 + cp);
  if (cp === 0x7f) return '␡';
  return `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** Free text with every control character (except newline and tab) made visible. */
export function visibleControls(text: string): string {
  return text.replace(CONTROL, visibleControl);
}

/**
 * Text as it may reach a terminal: with `color`, SGR sequences stay (they only colour text);
 * without, none do. Any other control character becomes visible (so `\u001b[2J` prints as
 * `␛[2J` and does nothing).
 */
export function terminalSafe(text: string, color: boolean): string {
  return text.replace(SGR_OR_CONTROL, (m: string, params: string | undefined) => {
    // Chalk at level 0 writes no SGR at all: without colour, one here came from data.
    if (params !== undefined && color && !params.split(';').some((p) => UNSAFE_SGR.has(p))) return m;
    return visibleControl(m.charAt(0)) + m.slice(1);
  });
}
