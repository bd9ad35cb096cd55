/**
 * The editor's view transform: image pixels → canvas CSS pixels as `screen = image * scale + (tx, ty)`. Fit, zoom
 * about a point, pan and centring; no drawing, no DOM beyond the sizes it is given.
 */
export class ViewTransform {
  scale = 1;
  tx = 0;
  ty = 0;

  /** The whole image in view, centred, with a small margin. */
  fit(imageWidth: number, imageHeight: number, viewWidth: number, viewHeight: number): void {
    this.scale = Math.min(viewWidth / imageWidth, viewHeight / imageHeight) * 0.95;
    this.tx = (viewWidth - imageWidth * this.scale) / 2;
    this.ty = (viewHeight - imageHeight * this.scale) / 2;
  }

  /** Zooms by `factor` keeping the image point under screen point (sx, sy) where it is; scale stays in [0.01, 64]. */
  zoomAt(sx: number, sy: number, factor: number): void {
    const next = Math.max(0.01, Math.min(64, this.scale * factor));
    const ix = (sx - this.tx) / this.scale, iy = (sy - this.ty) / this.scale;
    this.scale = next;
    this.tx = sx - ix * next;
    this.ty = sy - iy * next;
  }

  panBy(dx: number, dy: number): void {
    this.tx += dx;
    this.ty += dy;
  }

  /** Puts image point (ix, iy) in the middle of a view of the given size. */
  centerOn(ix: number, iy: number, viewWidth: number, viewHeight: number): void {
    this.tx = viewWidth / 2 - ix * this.scale;
    this.ty = viewHeight / 2 - iy * this.scale;
  }

  /** The image point under screen point (sx, sy). */
  toImage(sx: number, sy: number): [number, number] {
    return [(sx - this.tx) / this.scale, (sy - this.ty) / this.scale];
  }

  /** The image rectangle a view of the given size shows. */
  visibleRect(viewWidth: number, viewHeight: number): { x: number; y: number; width: number; height: number } {
    return { x: -this.tx / this.scale, y: -this.ty / this.scale, width: viewWidth / this.scale, height: viewHeight / this.scale };
  }
}
