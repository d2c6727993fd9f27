/**
 * Inline SVG charts for the HTML report: no script, no external asset, readable as a static
 * document. Every chart is an `<svg class="chart" data-chart="NAME">` with a title, axes and a
 * legend; values are accuracies in [0, 1].
 */
export interface Series {
  name: string;
  values: readonly number[];
  /** Optional ± spread per point (drawn as whiskers). */
  spread?: readonly number[];
  dashed?: boolean;
}

export const PALETTE = ['#1b6ca8', '#d1495b', '#2e8b57', '#edae49', '#7a4ea3', '#00798c', '#8c564b', '#555555'];

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const W = 560;
const H = 300;
const M = { left: 48, right: 170, top: 28, bottom: 40 };

function yOf(v: number, lo: number, hi: number): number {
  return M.top + (H - M.top - M.bottom) * (1 - (v - lo) / (hi - lo));
}

function axes(
  title: string,
  xLabels: readonly string[],
  xOf: (i: number) => number,
  lo: number,
  hi: number,
  xTitle: string,
): string {
  const parts: string[] = [];
  parts.push(`<text x="${M.left}" y="16" class="title">${esc(title)}</text>`);
  for (let k = 0; k <= 4; k++) {
    const v = lo + ((hi - lo) * k) / 4;
    const y = yOf(v, lo, hi);
    parts.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" class="grid"/>`);
    parts.push(
      `<text x="${M.left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" class="tick">${Math.round(v * 100)}%</text>`,
    );
  }
  xLabels.forEach((l, i) =>
    parts.push(
      `<text x="${xOf(i).toFixed(1)}" y="${H - M.bottom + 16}" text-anchor="middle" class="tick">${esc(l)}</text>`,
    ),
  );
  parts.push(
    `<text x="${(M.left + W - M.right) / 2}" y="${H - 6}" text-anchor="middle" class="axis">${esc(xTitle)}</text>`,
  );
  parts.push(
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}" class="axisline"/><line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" class="axisline"/>`,
  );
  return parts.join('');
}

function legend(series: readonly { name: string; dashed?: boolean }[]): string {
  return series
    .map((s, i) => {
      const y = M.top + 6 + i * 18;
      const x = W - M.right + 12;
      return `<line x1="${x}" x2="${x + 18}" y1="${y}" y2="${y}" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/><text x="${x + 24}" y="${y + 4}" class="legend">${esc(s.name)}</text>`;
    })
    .join('');
}

/** Lines over categorical x positions (rounds, ε values), y = accuracy. */
export function lineChart(
  name: string,
  title: string,
  xLabels: readonly string[],
  series: readonly Series[],
  xTitle: string,
  range: [number, number] = [0, 1],
): string {
  const [lo, hi] = range;
  const n = Math.max(1, xLabels.length);
  const xOf = (i: number): number => M.left + 16 + (W - M.left - M.right - 32) * (n === 1 ? 0.5 : i / (n - 1));
  const body = series
    .map((s, si) => {
      const color = PALETTE[si % PALETTE.length] as string;
      const pts = s.values.map((v, i) =>
        Number.isFinite(v) ? [xOf(i), yOf(Math.max(lo, Math.min(hi, v)), lo, hi)] : null,
      );
      const path = pts
        .filter((p): p is number[] => p !== null)
        .map((p) => `${(p[0] as number).toFixed(1)},${(p[1] as number).toFixed(1)}`)
        .join(' ');
      const whiskers = (s.spread ?? [])
        .map((sd, i) => {
          const v = s.values[i] as number;
          if (!Number.isFinite(v) || !(sd > 0)) return '';
          const x = xOf(i).toFixed(1);
          return `<line x1="${x}" x2="${x}" y1="${yOf(Math.min(hi, v + sd), lo, hi).toFixed(1)}" y2="${yOf(Math.max(lo, v - sd), lo, hi).toFixed(1)}" stroke="${color}" class="whisker"/>`;
        })
        .join('');
      const dots = pts
        .map((p) =>
          p
            ? `<circle cx="${(p[0] as number).toFixed(1)}" cy="${(p[1] as number).toFixed(1)}" r="3" fill="${color}"/>`
            : '',
        )
        .join('');
      return `<g class="series" data-series="${esc(s.name)}"><polyline points="${path}" fill="none" stroke="${color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>${whiskers}${dots}</g>`;
    })
    .join('');
  return `<svg class="chart" data-chart="${esc(name)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">${axes(title, xLabels, xOf, lo, hi, xTitle)}${body}${legend(series)}</svg>`;
}

/** Grouped bars: one group per label, one bar per series. */
export function barChart(
  name: string,
  title: string,
  groups: readonly string[],
  series: readonly Series[],
  range: [number, number] = [0, 1],
): string {
  const [lo, hi] = range;
  const n = Math.max(1, groups.length);
  const inner = W - M.left - M.right;
  const gw = inner / n;
  const bw = Math.min(36, (gw * 0.8) / Math.max(1, series.length));
  const xOf = (i: number): number => M.left + gw * (i + 0.5);
  const bars = series
    .map((s, si) => {
      const color = PALETTE[si % PALETTE.length] as string;
      return `<g class="series" data-series="${esc(s.name)}">${s.values
        .map((v, gi) => {
          if (!Number.isFinite(v)) return '';
          const x = xOf(gi) - (bw * series.length) / 2 + si * bw;
          const y = yOf(Math.max(lo, Math.min(hi, v)), lo, hi);
          const base = yOf(lo, lo, hi);
          const sd = s.spread?.[gi] ?? 0;
          const whisker =
            sd > 0
              ? `<line x1="${(x + bw / 2).toFixed(1)}" x2="${(x + bw / 2).toFixed(1)}" y1="${yOf(Math.min(hi, v + sd), lo, hi).toFixed(1)}" y2="${yOf(Math.max(lo, v - sd), lo, hi).toFixed(1)}" class="whisker" stroke="#222"/>`
              : '';
          return `<rect class="bar" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${Math.max(0.5, base - y).toFixed(1)}" fill="${color}"><title>${esc(`${s.name} · ${groups[gi] ?? ''}: ${(v * 100).toFixed(1)}%`)}</title></rect>${whisker}`;
        })
        .join('')}</g>`;
    })
    .join('');
  return `<svg class="chart" data-chart="${esc(name)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">${axes(title, groups, xOf, lo, hi, '')}${bars}${legend(series)}</svg>`;
}
