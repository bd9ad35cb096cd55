import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { decodeRle, rleArea, rleBbox, rleProblem } from '../../src/imaging/rle.js';
import { polygonArea } from '../../src/imaging/geometry.js';
import {
  SHAPE_CLASSES,
  datasetImage,
  generateDataset,
  generateShapesImage,
  renderShapes,
  shapeGeometry,
  type ExifOrientation,
} from '../../src/synthetic/index.js';

async function uprightPixels(data: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data: pixels, info } = await sharp(data).autoOrient().removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: pixels, width: info.width, height: info.height };
}

describe('synthetic shapes', () => {
  it('gives identical bytes and labels for the same seed and different ones for another seed', async () => {
    for (const format of ['jpeg', 'png', 'webp'] as const) {
      const a = await generateShapesImage({ seed: 42, width: 320, height: 240, count: 6, format });
      const b = await generateShapesImage({ seed: 42, width: 320, height: 240, count: 6, format });
      assert.ok(a.data.equals(b.data), `${format} bytes differ`);
      assert.deepEqual(a.shapes, b.shapes);
      const c = await generateShapesImage({ seed: 43, width: 320, height: 240, count: 6, format });
      assert.ok(!a.data.equals(c.data));
      assert.notDeepEqual(a.shapes, c.shapes);
    }
  });

  it('encodes the requested format and size', async () => {
    const jpeg = await generateShapesImage({ seed: 'fmt', width: 200, height: 100, format: 'jpeg', quality: 70 });
    assert.deepEqual([jpeg.mimeType, jpeg.extension], ['image/jpeg', 'jpg']);
    const meta = await sharp(jpeg.data).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height, meta.orientation], ['jpeg', 200, 100, undefined]);
    const png = await generateShapesImage({ seed: 'fmt', width: 200, height: 100, format: 'png' });
    assert.equal((await sharp(png.data).metadata()).format, 'png');
    assert.deepEqual(png.shapes, jpeg.shapes, 'labels do not depend on the encoding');
  });

  it('keeps every box inside the image and around its polygon, with masks matching area and box', () => {
    for (let seed = 0; seed < 12; seed++) {
      const width = 160 + seed * 37;
      const height = 120 + seed * 23;
      const { shapes } = renderShapes({ seed, width, height, count: 8 });
      assert.ok(shapes.length >= 6, `seed ${seed}: only ${shapes.length} shapes placed`);
      for (const shape of shapes) {
        const { bbox, polygon, mask } = shape;
        assert.ok(SHAPE_CLASSES[shape.classIndex].name === shape.className);
        assert.ok(bbox.width > 0 && bbox.height > 0);
        assert.ok(bbox.x >= 0 && bbox.y >= 0 && bbox.x + bbox.width <= width && bbox.y + bbox.height <= height, `box ${JSON.stringify(bbox)} leaves ${width}×${height}`);
        assert.ok(polygon.length >= 3);
        for (const [x, y] of polygon) {
          assert.ok(x >= bbox.x && x <= bbox.x + bbox.width + 1e-9 && y >= bbox.y && y <= bbox.y + bbox.height + 1e-9);
        }
        assert.ok(mask);
        assert.equal(rleProblem(mask, height, width), null);
        assert.equal(rleArea(mask), shape.area);
        // Pixel-centre sampling differs from the exact area by at most about one pixel along the outline.
        const exact = polygonArea(polygon);
        const perimeter = polygon.reduce((sum, [x, y], i) => {
          const [nx, ny] = polygon[(i + 1) % polygon.length];
          return sum + Math.hypot(nx - x, ny - y);
        }, 0);
        assert.ok(Math.abs(shape.area - exact) <= perimeter / 2 + 4, `area ${shape.area} vs polygon ${exact}`);
        const box = rleBbox(mask);
        assert.ok(box);
        assert.ok(box.x >= Math.floor(bbox.x) && box.y >= Math.floor(bbox.y));
        assert.ok(box.x + box.width <= Math.ceil(bbox.x + bbox.width) && box.y + box.height <= Math.ceil(bbox.y + bbox.height));
      }
    }
  });

  it('paints exactly the mask pixels in the shape colour, and masks never overlap', async () => {
    const image = await generateShapesImage({ seed: 7, width: 240, height: 180, count: 7, format: 'png', background: 'gradient' });
    const { data } = await uprightPixels(image.data);
    const covered = new Uint8Array(240 * 180);
    for (const shape of image.shapes) {
      const bitmap = decodeRle(shape.mask!);
      const color = shape.color;
      for (let i = 0; i < bitmap.data.length; i++) {
        if (!bitmap.data[i]) continue;
        assert.equal(covered[i], 0, 'two masks share a pixel');
        covered[i] = 1;
        const hex = `#${[data[i * 3], data[i * 3 + 1], data[i * 3 + 2]].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
        assert.equal(hex, color);
      }
    }
  });

  it('writes EXIF orientations so that the oriented image is the labelled one', async () => {
    const options = { seed: 'exif', width: 60, height: 40, count: 3, format: 'png' as const };
    const upright = await uprightPixels((await generateShapesImage(options)).data);
    for (const orientation of [1, 2, 3, 4, 5, 6, 7, 8] as ExifOrientation[]) {
      const image = await generateShapesImage({ ...options, orientation });
      assert.equal(image.orientation, orientation);
      assert.deepEqual([image.width, image.height], [60, 40]);
      const meta = await sharp(image.data).metadata();
      assert.equal(meta.orientation, orientation);
      assert.deepEqual([meta.width, meta.height], orientation >= 5 ? [40, 60] : [60, 40]);
      const shown = await uprightPixels(image.data);
      assert.deepEqual([shown.width, shown.height], [60, 40]);
      assert.ok(shown.data.equals(upright.data), `orientation ${orientation} does not show the labelled image`);
    }
    const jpeg = await generateShapesImage({ seed: 'exif', width: 64, height: 48, orientation: 6 });
    assert.equal((await sharp(jpeg.data).metadata()).orientation, 6);
  });

  it('refuses options it cannot honour', async () => {
    assert.throws(() => renderShapes({ seed: 1, width: 4 }), RangeError);
    assert.throws(() => renderShapes({ seed: 1, count: -1 }), RangeError);
    assert.throws(() => renderShapes({ seed: 1, background: 'stripes' as never }), RangeError);
    await assert.rejects(generateShapesImage({ seed: 1, quality: 0 }), RangeError);
    await assert.rejects(generateShapesImage({ seed: 1, orientation: 9 as never }), RangeError);
  });

  it('builds datasets whose images can each be made alone', async () => {
    const all = await generateDataset('ds', 4, { width: 96, height: 64, count: [1, 3], masks: false });
    assert.deepEqual(all.map((image) => image.filename), ['shapes-0000.jpg', 'shapes-0001.jpg', 'shapes-0002.jpg', 'shapes-0003.jpg']);
    const third = await datasetImage('ds', 2, { width: 96, height: 64, count: [1, 3], masks: false });
    assert.ok(third.data.equals(all[2].data));
    assert.deepEqual(third.shapes, all[2].shapes);
    for (const image of all) {
      assert.ok(image.shapes.length >= 1 && image.shapes.length <= 3);
      assert.ok(image.shapes.every((shape) => shape.mask === null));
    }
  });

  it('turns shapes into annotation geometry in the API contract shapes', () => {
    const [shape] = renderShapes({ seed: 3, width: 100, height: 80, count: 1 }).shapes;
    assert.deepEqual(shapeGeometry(shape, 'bbox'), shape.bbox);
    const polygon = shapeGeometry(shape, 'polygon') as { points: number[][] };
    assert.deepEqual(polygon.points, shape.polygon);
    const mask = shapeGeometry(shape, 'mask') as { rle: unknown; bbox: unknown };
    assert.deepEqual(mask.rle, shape.mask);
    assert.deepEqual(mask.bbox, rleBbox(shape.mask!));
    const [bare] = renderShapes({ seed: 3, width: 100, height: 80, count: 1, masks: false }).shapes;
    assert.throws(() => shapeGeometry(bare, 'mask'));
  });
});
