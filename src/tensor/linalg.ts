/**
 * Dense linear algebra on small float64 matrices (row-major): what LoRA-FAIR's refinement and
 * the trainer's LoRA factors need, nothing more. The large, streaming kernels (pairwise
 * distances, means over many updates) live with the aggregation rules that use them.
 */
export interface Matrix {
  rows: number;
  cols: number;
  data: Float64Array;
}

export function matrix(rows: number, cols: number, data?: ArrayLike<number>): Matrix {
  const m: Matrix = { rows, cols, data: new Float64Array(rows * cols) };
  if (data) {
    if (data.length !== rows * cols)
      throw new RangeError(`matrix ${rows}×${cols} needs ${rows * cols} values, got ${data.length}`);
    m.data.set(data);
  }
  return m;
}

export function fromNested(a: readonly (readonly number[])[]): Matrix {
  const rows = a.length;
  const cols = a[0]?.length ?? 0;
  return matrix(rows, cols, a.flat());
}

export function toNested(m: Matrix): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < m.rows; i++) out.push(Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));
  return out;
}

export function identity(r: number): Matrix {
  const m = matrix(r, r);
  for (let i = 0; i < r; i++) m.data[i * r + i] = 1;
  return m;
}

/** C = op(A)·op(B) (tA/tB transpose). */
export function matmul(A: Matrix, B: Matrix, tA = false, tB = false): Matrix {
  const ar = tA ? A.cols : A.rows;
  const ac = tA ? A.rows : A.cols;
  const br = tB ? B.cols : B.rows;
  const bc = tB ? B.rows : B.cols;
  if (ac !== br) throw new RangeError(`matmul: ${ar}×${ac} by ${br}×${bc}`);
  const C = matrix(ar, bc);
  const a = A.data;
  const b = B.data;
  const c = C.data;
  for (let i = 0; i < ar; i++) {
    for (let k = 0; k < ac; k++) {
      const aik = (tA ? a[k * A.cols + i] : a[i * A.cols + k]) as number;
      if (aik === 0) continue;
      for (let j = 0; j < bc; j++)
        c[i * bc + j] = (c[i * bc + j] as number) + aik * ((tB ? b[j * B.cols + k] : b[k * B.cols + j]) as number);
    }
  }
  return C;
}

/** Σ aᵢbᵢ (the Frobenius inner product of two same-shaped matrices' data). */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** target += scale · source, in place. */
export function addScaled(target: Matrix, source: Matrix, scale: number): void {
  for (let i = 0; i < target.data.length; i++)
    target.data[i] = (target.data[i] as number) + scale * (source.data[i] as number);
}

export function transpose(A: Matrix): Matrix {
  const T = matrix(A.cols, A.rows);
  for (let i = 0; i < A.rows; i++)
    for (let j = 0; j < A.cols; j++) T.data[j * A.rows + i] = A.data[i * A.cols + j] as number;
  return T;
}

/** Solves M X = B by Gaussian elimination with partial pivoting (M small, square); null when M is singular. */
export function solve(M0: Matrix, B0: Matrix): Matrix | null {
  const n = M0.rows;
  const M = matrix(n, n, M0.data);
  const B = matrix(B0.rows, B0.cols, B0.data);
  const c = B.cols;
  for (let col = 0; col < n; col++) {
    let piv = col;
    for (let i = col + 1; i < n; i++)
      if (Math.abs(M.data[i * n + col] as number) > Math.abs(M.data[piv * n + col] as number)) piv = i;
    const pv = M.data[piv * n + col] as number;
    if (pv === 0) return null;
    if (piv !== col) {
      for (let j = 0; j < n; j++)
        [M.data[col * n + j], M.data[piv * n + j]] = [M.data[piv * n + j] as number, M.data[col * n + j] as number];
      for (let j = 0; j < c; j++)
        [B.data[col * c + j], B.data[piv * c + j]] = [B.data[piv * c + j] as number, B.data[col * c + j] as number];
    }
    for (let i = 0; i < n; i++) {
      if (i === col) continue;
      const f = (M.data[i * n + col] as number) / pv;
      if (f === 0) continue;
      for (let j = col; j < n; j++)
        M.data[i * n + j] = (M.data[i * n + j] as number) - f * (M.data[col * n + j] as number);
      for (let j = 0; j < c; j++)
        B.data[i * c + j] = (B.data[i * c + j] as number) - f * (B.data[col * c + j] as number);
    }
  }
  for (let i = 0; i < n; i++) {
    const d = M.data[i * n + i] as number;
    for (let j = 0; j < c; j++) B.data[i * c + j] = (B.data[i * c + j] as number) / d;
  }
  return B;
}
