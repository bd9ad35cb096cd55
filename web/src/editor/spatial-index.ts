export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * A uniform grid over the image: each shape is listed in every cell its bounds touch. Queries visit only the cells
 * under the query rectangle, so hit testing and culling cost the same at 50 shapes as at 5,000.
 */
export class GridIndex {
  private readonly cells: number[][];
  private readonly cols: number;
  private readonly rows: number;
  private readonly cell: number;
  private readonly bounds = new Map<number, Rect>();
  private readonly seen = new Map<number, number>();
  private stamp = 0;

  constructor(width: number, height: number, cellSize = Math.max(32, Math.ceil(Math.max(width, height) / 64))) {
    this.cell = cellSize;
    this.cols = Math.max(1, Math.ceil(width / cellSize));
    this.rows = Math.max(1, Math.ceil(height / cellSize));
    this.cells = Array.from({ length: this.cols * this.rows }, () => []);
  }

  get size(): number {
    return this.bounds.size;
  }

  private range(r: Rect): [number, number, number, number] {
    const clamp = (v: number, max: number) => Math.min(max - 1, Math.max(0, v));
    return [
      clamp(Math.floor(r.x / this.cell), this.cols),
      clamp(Math.floor(r.y / this.cell), this.rows),
      clamp(Math.floor((r.x + r.width) / this.cell), this.cols),
      clamp(Math.floor((r.y + r.height) / this.cell), this.rows),
    ];
  }

  insert(key: number, r: Rect): void {
    if (this.bounds.has(key)) this.remove(key);
    this.bounds.set(key, r);
    const [c0, r0, c1, r1] = this.range(r);
    for (let row = r0; row <= r1; row++) for (let col = c0; col <= c1; col++) this.cells[row * this.cols + col].push(key);
  }

  remove(key: number): void {
    const r = this.bounds.get(key);
    if (!r) return;
    this.bounds.delete(key);
    const [c0, r0, c1, r1] = this.range(r);
    for (let row = r0; row <= r1; row++)
      for (let col = c0; col <= c1; col++) {
        const list = this.cells[row * this.cols + col];
        const at = list.indexOf(key);
        if (at >= 0) list.splice(at, 1);
      }
  }

  /** Keys whose bounds intersect the rectangle. */
  query(r: Rect, out: number[] = []): number[] {
    const stamp = ++this.stamp;
    const [c0, r0, c1, r1] = this.range(r);
    for (let row = r0; row <= r1; row++)
      for (let col = c0; col <= c1; col++)
        for (const key of this.cells[row * this.cols + col]) {
          if (this.seen.get(key) === stamp) continue;
          this.seen.set(key, stamp);
          const b = this.bounds.get(key)!;
          if (b.x <= r.x + r.width && b.x + b.width >= r.x && b.y <= r.y + r.height && b.y + b.height >= r.y) out.push(key);
        }
    return out;
  }

  queryPoint(x: number, y: number, slack = 0): number[] {
    return this.query({ x: x - slack, y: y - slack, width: slack * 2, height: slack * 2 });
  }
}
