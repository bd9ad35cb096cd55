/**
 * Mosaic: four images (this output and three partners) each cover one quadrant of the canvas around a centre
 * point, scaled to cover it and centre-cropped; their annotations follow and are clipped to their quadrant (every
 * shape as geometry-transform.ts says; group ids renumbered per tile so objects of different images never share one).
 */
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { chain, scale, translate, type Affine } from './affine.js';
import { transformAnnotations, type RecipeAnnotation } from './geometry-transform.js';
import type { Region, Size } from './steps.js';

export interface RawImage {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

export interface MosaicTile<A extends RecipeAnnotation> {
  image: RawImage;
  /** Annotations already in the tile image's frame. */
  annotations: A[];
}

/** Top-left, top-right, bottom-left, bottom-right around (centerX, centerY). */
export function quadrants(canvas: Size, centerX: number, centerY: number): Region[] {
  const cx = Math.min(canvas.width - 1, Math.max(1, centerX));
  const cy = Math.min(canvas.height - 1, Math.max(1, centerY));
  return [
    { x: 0, y: 0, width: cx, height: cy },
    { x: cx, y: 0, width: canvas.width - cx, height: cy },
    { x: 0, y: cy, width: cx, height: canvas.height - cy },
    { x: cx, y: cy, width: canvas.width - cx, height: canvas.height - cy },
  ];
}

/** Cover-fit of an image into a quadrant: the scaled size, the centre crop and the map into quadrant-local pixels. */
export function coverPlacement(from: Size, quadrant: Region) {
  const s = Math.max(quadrant.width / from.width, quadrant.height / from.height);
  const width = Math.max(quadrant.width, Math.round(from.width * s));
  const height = Math.max(quadrant.height, Math.round(from.height * s));
  const left = Math.floor((width - quadrant.width) / 2);
  const top = Math.floor((height - quadrant.height) / 2);
  const map: Affine = chain(scale(width / from.width, height / from.height), translate(-left, -top));
  return { width, height, left, top, map };
}

/** The four tiles composed into one raw canvas, and all their annotations in canvas pixels. */
export async function composeMosaic<A extends RecipeAnnotation>(
  canvas: Size,
  centerX: number,
  centerY: number,
  tiles: readonly [MosaicTile<A>, MosaicTile<A>, MosaicTile<A>, MosaicTile<A>],
): Promise<{ image: RawImage; annotations: A[] }> {
  const regions = quadrants(canvas, centerX, centerY);
  const overlays: OverlayOptions[] = [];
  const annotations: A[] = [];
  let groupOffset = 0;
  for (let q = 0; q < 4; q++) {
    const { image, annotations: own } = tiles[q];
    const region = regions[q];
    const placement = coverPlacement(image, region);
    const piece = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } })
      .resize(placement.width, placement.height, { fit: 'fill' })
      .extract({ left: placement.left, top: placement.top, width: region.width, height: region.height })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    overlays.push({ input: piece.data, raw: { width: piece.info.width, height: piece.info.height, channels: piece.info.channels }, left: region.x, top: region.y });
    const local = transformAnnotations(own, placement.map, region);
    const placed = transformAnnotations(local, translate(region.x, region.y), canvas);
    // Group ids are per source image: each tile's are moved above the previous tiles' so no two objects merge.
    const offset = groupOffset;
    for (const a of placed) {
      if (a.group_id != null) groupOffset = Math.max(groupOffset, offset + a.group_id);
      annotations.push(a.group_id != null && offset > 0 ? { ...a, group_id: offset + a.group_id } : a);
    }
  }
  const { data, info } = await sharp({ create: { width: canvas.width, height: canvas.height, channels: 3, background: '#000000' } })
    .composite(overlays)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { image: { data, width: info.width, height: info.height, channels: info.channels }, annotations };
}
