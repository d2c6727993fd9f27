/** Plain-text table with column alignment; width-aware truncation of the last column. */
export interface Column<T> {
  header: string;
  get: (row: T) => string;
  align?: 'left' | 'right';
}

const ANSI = /\u001b\[[0-9;]*m/g;
export function visibleLength(s: string): number {
  let n = 0;
  for (const ch of s.replace(ANSI, '')) {
    const cp = ch.codePointAt(0) ?? 0;
    n += cp >= 0x1100 && isWide(cp) ? 2 : 1;
  }
  return n;
}

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

/** Single-line rendering of free text: control characters shown as escapes, then truncated. */
export function oneLine(s: string | null | undefined, max: number): string {
  if (s === null || s === undefined) return '';
  const flat = s
    .replace(/\r\n|\r|\n/g, '⏎')
    .replace(/\t/g, ' ')
    .replace(/[\u0000-\u001f\u007f]/g, '·');
  if (visibleLength(flat) <= max) return flat;
  let out = '';
  for (const ch of flat) {
    if (visibleLength(out + ch) > max - 1) break;
    out += ch;
  }
  return `${out}…`;
}

export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[], gap = 2): string {
  const cells = rows.map((r) => columns.map((c) => c.get(r)));
  const widths = columns.map((c, i) =>
    Math.max(visibleLength(c.header), ...cells.map((row) => visibleLength(row[i] ?? ''))),
  );
  const pad = (s: string, i: number): string => {
    const w = widths[i] ?? 0;
    const fill = ' '.repeat(Math.max(0, w - visibleLength(s)));
    return columns[i]?.align === 'right' ? fill + s : s + fill;
  };
  const sep = ' '.repeat(gap);
  const lines = [
    columns
      .map((c, i) => pad(c.header, i))
      .join(sep)
      .trimEnd(),
  ];
  for (const row of cells)
    lines.push(
      row
        .map((s, i) => pad(s, i))
        .join(sep)
        .trimEnd(),
    );
  return `${lines.join('\n')}\n`;
}

/** Wraps plain text at spaces to lines of at most `width` visible characters (a longer word stands alone). */
export function wrapWords(text: string, width: number): string {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if (line !== '' && visibleLength(next) > width) {
      out.push(line);
      line = word;
    } else line = next;
  }
  if (line !== '') out.push(line);
  return out.join('\n');
}

/** The widest line of a rendered block. */
export function blockWidth(text: string): number {
  return Math.max(0, ...text.split('\n').map(visibleLength));
}
