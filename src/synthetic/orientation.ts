/** An EXIF orientation value: 1 is upright; 2–8 ask viewers to mirror and/or rotate the stored pixels. */
export type ExifOrientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

export interface RawImage {
  width: number;
  height: number;
  /** RGB, row-major, 3 bytes per pixel. */
  data: Buffer;
}

/**
 * The stored pixels that a viewer honouring `orientation` shows as `displayed`. Writing these with the EXIF tag makes a
 * file whose upright form is `displayed`, so labels drawn on `displayed` stay correct once the tag is applied.
 */
export function storedForOrientation(displayed: RawImage, orientation: ExifOrientation): RawImage {
  if (orientation === 1) return displayed;
  const { width: dw, height: dh, data } = displayed;
  const swaps = orientation >= 5;
  const sw = swaps ? dh : dw;
  const sh = swaps ? dw : dh;
  const stored = Buffer.alloc(sw * sh * 3);
  for (let sy = 0; sy < sh; sy++) {
    for (let sx = 0; sx < sw; sx++) {
      const [dx, dy] = displayedPosition(orientation, sx, sy, sw, sh);
      const from = (dy * dw + dx) * 3;
      const to = (sy * sw + sx) * 3;
      stored[to] = data[from];
      stored[to + 1] = data[from + 1];
      stored[to + 2] = data[from + 2];
    }
  }
  return { width: sw, height: sh, data: stored };
}

/** Where the stored pixel (sx, sy) of a sw×sh image appears once the orientation is applied (EXIF 2.3, tag 0x0112). */
function displayedPosition(orientation: ExifOrientation, sx: number, sy: number, sw: number, sh: number): [number, number] {
  switch (orientation) {
    case 1:
      return [sx, sy];
    case 2: // mirrored horizontally
      return [sw - 1 - sx, sy];
    case 3: // rotated 180°
      return [sw - 1 - sx, sh - 1 - sy];
    case 4: // mirrored vertically
      return [sx, sh - 1 - sy];
    case 5: // transposed
      return [sy, sx];
    case 6: // shown rotated 90° clockwise
      return [sh - 1 - sy, sx];
    case 7: // transversed
      return [sh - 1 - sy, sw - 1 - sx];
    case 8: // shown rotated 90° counter-clockwise
      return [sy, sw - 1 - sx];
  }
}
