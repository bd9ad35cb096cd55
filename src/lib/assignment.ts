/**
 * Optimal one-to-one assignment (the Hungarian method, O(n²m) with potentials) for trackers and tracking metrics.
 * Pure: costs in, pairs out.
 */

/** A cost that forbids a pair: such pairs are never returned. */
export const FORBIDDEN = Number.POSITIVE_INFINITY;

/** Larger than any sum of real costs the callers build (IoU costs, frame counts), smaller than overflow. */
const BIG = 1e9;

/**
 * The pairs [row, column] of least total cost. Without `limit`, as many pairs as possible are made first (forbidden
 * pairs aside), then the cheapest such set; with `limit`, leaving a row or a column unmatched costs limit / 2 each,
 * so a pair is made only where it costs less than `limit` (what lapjv's `cost_limit` does in ByteTrack).
 */
export function assign(cost: readonly (readonly number[])[], limit?: number): [number, number][] {
  const rows = cost.length;
  const cols = rows === 0 ? 0 : cost[0].length;
  if (rows === 0 || cols === 0) return [];
  const allowed = (c: number) => Number.isFinite(c) && (limit === undefined || c < limit);
  if (limit === undefined) {
    const matrix = cost.map((row) => row.map((c) => (Number.isFinite(c) ? c : BIG)));
    return solve(matrix).filter(([r, c]) => allowed(cost[r][c]));
  }
  // Each row and column gets a stand-in partner at limit / 2; stand-ins pair with each other at no cost.
  const n = rows + cols;
  const matrix: number[][] = Array.from({ length: n }, () => new Array<number>(n).fill(BIG));
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) if (allowed(cost[r][c])) matrix[r][c] = cost[r][c];
    matrix[r][cols + r] = limit / 2;
  }
  for (let c = 0; c < cols; c++) {
    matrix[rows + c][c] = limit / 2;
    for (let r = 0; r < rows; r++) matrix[rows + c][cols + r] = 0;
  }
  return solve(matrix).filter(([r, c]) => r < rows && c < cols && allowed(cost[r][c]));
}

/** Every row of a rectangular matrix (transposed when it has more rows than columns) matched at least total cost. */
function solve(matrix: number[][]): [number, number][] {
  const rows = matrix.length;
  const cols = matrix[0].length;
  if (rows > cols) {
    const transposed = Array.from({ length: cols }, (_, c) => matrix.map((row) => row[c]));
    return solve(transposed).map(([c, r]) => [r, c]);
  }
  // 1-based potentials u (rows) and v (columns); p[j]: the row matched to column j; column 0 is the free root.
  const u = new Float64Array(rows + 1);
  const v = new Float64Array(cols + 1);
  const p = new Int32Array(cols + 1);
  const way = new Int32Array(cols + 1);
  for (let i = 1; i <= rows; i++) {
    p[0] = i;
    let j0 = 0;
    const minv = new Float64Array(cols + 1).fill(Number.POSITIVE_INFINITY);
    const used = new Uint8Array(cols + 1);
    do {
      used[j0] = 1;
      const i0 = p[j0];
      let delta = Number.POSITIVE_INFINITY;
      let j1 = 0;
      for (let j = 1; j <= cols; j++) {
        if (used[j]) continue;
        const cur = matrix[i0 - 1][j - 1] - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (let j = 0; j <= cols; j++) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else minv[j] -= delta;
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 !== 0);
  }
  const pairs: [number, number][] = [];
  for (let j = 1; j <= cols; j++) if (p[j] !== 0) pairs.push([p[j] - 1, j - 1]);
  return pairs.sort((a, b) => a[0] - b[0]);
}
