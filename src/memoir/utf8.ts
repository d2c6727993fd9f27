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
