/**
 * Where the first invalid UTF-8 sequence of `b[start, end)` begins (relative to `start`), or -1.
 * Only called once a fast whole-block check (`buffer.isUtf8`) has failed: it names the byte.
 */
export function firstInvalidUtf8(b: Uint8Array, start = 0, end = b.length): number {
  let i = start;
  while (i < end) {
    const c = b[i] as number;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i - start;
    if (i + need >= end) return i - start; // truncated sequence
    let cp = c & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const d = b[i + k] as number;
      if ((d & 0xc0) !== 0x80) return i - start;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i - start;
    i += need + 1;
  }
  return -1;
}

/**
 * JSON text can name a lone surrogate with an escape (`"\ud800"`): JSON.parse accepts it, but it is
 * not Unicode text, cannot be written as UTF-8, and Python readers refuse the whole line. Only text
 * holding such an escape (a quick test, case-insensitive) is walked.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * True when the JSON `text` holds a string (key or value) with a lone surrogate. `parsed` gives its
 * value (called only when the text holds a surrogate escape); text that is not JSON is false here.
 */
export function hasLoneSurrogate(text: string, parsed: () => unknown = () => JSON.parse(text)): boolean {
  const at = text.indexOf('\\u'); // a plain search first: most lines hold no \u escape at all
  if (at < 0 || !SURROGATE_ESCAPE.test(at === 0 ? text : text.slice(at))) return false;
  try {
    return !wellFormedValue(parsed());
  } catch {
    return false; // not JSON: whoever parses it reports that
  }
}

function wellFormedValue(v: unknown): boolean {
  if (typeof v === 'string') return v.isWellFormed();
  if (typeof v !== 'object' || v === null) return true;
  if (Array.isArray(v)) return v.every(wellFormedValue);
  for (const [k, x] of Object.entries(v)) if (!k.isWellFormed() || !wellFormedValue(x)) return false;
  return true;
}
