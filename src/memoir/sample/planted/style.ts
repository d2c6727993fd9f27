import type { Axis } from './catalogue.js';

/**
 * A rendering style: for each axis a sample shows, which pole (0 or 1) and which variant of that
 * pole. Variants are different ways of writing the same pole (a compact or a braced guard), so
 * the two sides of a pair can be balanced in length without changing what the pair teaches.
 */
export interface AxisStyle {
  pole: 0 | 1;
  variant: number;
}
export type Style = Partial<Record<Axis, AxisStyle>>;

/** Per axis a sample kind shows: how many variants each pole has. */
export type VariantCounts = Partial<Record<Axis, readonly [number, number]>>;

export function poleOf(style: Style, axis: Axis): 0 | 1 {
  return style[axis]?.pole ?? 0;
}

export function variantOf(style: Style, axis: Axis): number {
  return style[axis]?.variant ?? 0;
}

/** Indents every line of `lines` by `n` spaces. */
export function indent(lines: readonly string[], n: number): string[] {
  const pad = ' '.repeat(n);
  return lines.map((l) => (l === '' ? l : pad + l));
}
