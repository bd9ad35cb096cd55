/** Tile regions: rows × columns integer rectangles that cover an image exactly, without overlap. */
import type { Region, Size } from './steps.js';

export interface TileRegion extends Region {
  row: number;
  column: number;
}

/** Tile edges fall on rounded multiples of width/columns, so tiles differ by at most one pixel. */
export function tileRegions(size: Size, rows: number, columns: number): TileRegion[] {
  const xs = edges(size.width, columns);
  const ys = edges(size.height, rows);
  const tiles: TileRegion[] = [];
  for (let row = 0; row < rows; row++) {
    for (let column = 0; column < columns; column++) {
      const width = xs[column + 1] - xs[column];
      const height = ys[row + 1] - ys[row];
      if (width > 0 && height > 0) tiles.push({ row, column, x: xs[column], y: ys[row], width, height });
    }
  }
  return tiles;
}

function edges(length: number, parts: number): number[] {
  return Array.from({ length: parts + 1 }, (_, i) => Math.round((i * length) / parts));
}
