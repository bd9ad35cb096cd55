import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { decodeRle, encodeRle, rleArea, type Bitmap } from '../../src/imaging/rle.js';
import { signedPolygonArea as signedArea } from '../../src/imaging/geometry.js';
import { maskToPolygons, traceBoundaries } from '../../src/inference/contour.js';
import { EmbeddingCache, type CachedEmbedding } from '../../src/inference/embedding-cache.js';
import { letterbox, letterboxTransform, resizeForInput, toInput, toInputTensor, toNchw, toOriginal } from '../../src/inference/letterbox.js';
import { nonMaxSuppression, type Candidate } from '../../src/inference/nms.js';
import { parseNames, parseUltralyticsMetadata, readOnnxMetadata } from '../../src/inference/onnx-metadata.js';
import { detectLayout } from '../../src/inference/yolo-decode.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { exifRotatedJpeg, squaresPng } from '../helpers/onnx/test-images.js';

function bitmap(rows: string[]): Bitmap {
  const height = rows.length;
  const width = rows[0].length;
  const data = new Uint8Array(width * height);
  rows.forEach((row, y) => [...row].forEach((c, x) => (data[y * width + x] = c === '#' ? 1 : 0)));
  return { width, height, data };
}

/** Even-odd point-in-polygon at pixel centres, to compare a polygon with the pixels it should enclose. */
function rasterise(polygons: [number, number][][], width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [px, py] = [x + 0.5, y + 0.5];
      for (const polygon of polygons) {
        let inside = false;
        for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
          const [xi, yi] = polygon[i];
          const [xj, yj] = polygon[j];
          if (yi > py !== yj > py && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
        }
        if (inside) out[y * width + x] = 1;
      }
    }
  }
  return out;
}

describe('contour tracing', () => {
  it('puts a lone pixel on its four corners', () => {
    assert.deepEqual(maskToPolygons(bitmap(['...', '.#.', '...']), { epsilon: 0 }), [[[1, 1], [2, 1], [2, 2], [1, 2]]]);
  });

  it('encloses exactly the pixels of an irregular shape, holes reported separately and left out of polygons', () => {
    const mask = bitmap([
      '..........',
      '.#####....',
      '.#...#..#.',
      '.#####.###',
      '...##.....',
    ]);
    const loops = traceBoundaries(mask);
    assert.equal(loops.filter((l) => signedArea(l) > 0).length, 2);
    assert.equal(loops.filter((l) => signedArea(l) < 0).length, 1);
    const polygons = maskToPolygons(mask, { epsilon: 0 });
    assert.equal(polygons.length, 2);
    const filled = bitmap([
      '..........',
      '.#####....',
      '.#####..#.',
      '.#####.###',
      '...##.....',
    ]);
    assert.deepEqual(rasterise(polygons, 10, 5), filled.data);
    assert.equal(signedArea(polygons[0]), 17);
  });

  it('joins diagonal neighbours into one region', () => {
    const polygons = maskToPolygons(bitmap(['#..', '.#.', '..#']), { epsilon: 0 });
    assert.equal(polygons.length, 1);
    assert.equal(signedArea(polygons[0]), 3);
  });

  it('simplifies staircase edges within the tolerance and drops specks below minArea', () => {
    const size = 40;
    const data = new Uint8Array(size * size);
    for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) if ((x - 20) ** 2 + (y - 20) ** 2 <= 225) data[y * size + x] = 1;
    data[0] = 1;
    const mask = { width: size, height: size, data };
    const exact = maskToPolygons(mask, { epsilon: 0, minArea: 2 });
    const simple = maskToPolygons(mask, { epsilon: 1, minArea: 2 });
    assert.equal(exact.length, 1);
    assert.ok(simple[0].length < exact[0].length / 2, `${simple[0].length} vs ${exact[0].length}`);
    assert.ok(Math.abs(signedArea(simple[0]) - rleArea(encodeRle(mask)) + 1) < 30);
  });
});

describe('non-maximum suppression', () => {
  const box = (x1: number, score: number, classId: number, index: number): Candidate => ({ x1, y1: 0, x2: x1 + 10, y2: 10, score, classId, index });

  it('keeps the best of overlapping boxes per class, never across classes, best first', () => {
    const kept = nonMaxSuppression([box(0, 0.5, 0, 0), box(1, 0.9, 0, 1), box(1, 0.8, 1, 2), box(30, 0.3, 0, 3)], 0.5, 10);
    assert.deepEqual(kept.map((c) => c.index), [1, 2, 3]);
    assert.deepEqual(nonMaxSuppression([box(0, 0.5, 0, 0), box(1, 0.9, 0, 1)], 0.9, 10).map((c) => c.index), [1, 0]);
    assert.equal(nonMaxSuppression([box(0, 0.5, 0, 0), box(50, 0.9, 0, 1)], 0.5, 1).length, 1);
  });
});

describe('YOLO layouts and metadata', () => {
  const t = (dims: number[]) => ({ type: 'float32' as const, data: new Float32Array(0), dims });

  it('tells the layouts apart by shape, settling ambiguous ones with the class count or end2end flag', () => {
    assert.equal(detectLayout([t([1, 84, 8400])]), 'v8');
    assert.equal(detectLayout([t([1, 25200, 85])]), 'v5');
    assert.equal(detectLayout([t([1, 300, 6])]), 'end2end');
    assert.equal(detectLayout([t([1, 116, 8400]), t([1, 32, 160, 160])]), 'v8-seg');
    assert.equal(detectLayout([t([1, 300, 38]), t([1, 32, 160, 160])]), 'end2end-seg');
    assert.equal(detectLayout([t([1, 300, 38]), t([1, 32, 160, 160])], 80), 'end2end-seg');
    assert.equal(detectLayout([t([1, 38, 300]), t([1, 32, 160, 160])], 2), 'v8-seg');
    assert.equal(detectLayout([t([1, 5, 38]), t([1, 32, 32, 32])], 2, true), 'end2end-seg');
    assert.equal(detectLayout([t([1, 25200, 6])], 1), 'v5');
    assert.equal(detectLayout([t([1, 25200, 6])], 1, true), 'end2end');
    assert.equal(detectLayout([t([1, 6, 4])], 2), 'v8');
    assert.throws(() => detectLayout([t([84, 8400])]), { statusCode: 422 });
  });

  it('reads class names, image size and task from the metadata Ultralytics writes', () => {
    const metadata = readOnnxMetadata(buildYoloModel('end2end'));
    assert.deepEqual(parseUltralyticsMetadata(metadata), { names: ['red', 'green'], imgsz: [128, 128], task: 'detect', endToEnd: true });
    assert.deepEqual(parseNames(`{0: 'person', 1: "it's", 2: 'traffic light'}`), ['person', "it's", 'traffic light']);
    assert.equal(parseNames('{1: "a"}'), null);
    assert.throws(() => readOnnxMetadata(new Uint8Array([0x0a, 0xff])));
  });
});

describe('letterbox', () => {
  it('centres the resized image in grey padding and maps points back exactly', async () => {
    const png = await squaresPng(200, 100, [{ x: 0, y: 0, width: 200, height: 100, colour: [200, 10, 10] }]);
    const { rgb, transform } = await letterbox(png, 64, 64);
    assert.deepEqual(
      [transform.resizedWidth, transform.resizedHeight, transform.padLeft, transform.padTop],
      [64, 32, 0, 16],
    );
    assert.deepEqual([...rgb.subarray(0, 3)], [114, 114, 114]);
    const centre = (32 * 64 + 32) * 3;
    assert.deepEqual([...rgb.subarray(centre, centre + 3)], [200, 10, 10]);
    assert.deepEqual(toOriginal(transform, ...toInput(transform, 37.5, 81.25)), [37.5, 81.25]);
    assert.deepEqual(toOriginal(transform, 0, 0), [0, 0]);
    const planes = toNchw(rgb, 64, 64);
    assert.equal(planes[32 * 64 + 32], Math.fround(200 / 255));
    assert.equal(planes[64 * 64 + 32 * 64 + 32], Math.fround(10 / 255));
  });

  it('applies EXIF orientation before sizing', async () => {
    const jpeg = await exifRotatedJpeg(60, 100, []);
    const { transform } = await letterbox(jpeg, 50, 50);
    assert.deepEqual([transform.originalWidth, transform.originalHeight, transform.resizedWidth, transform.resizedHeight], [60, 100, 30, 50]);
  });

  it('refuses bytes that are not an image with a 422', async () => {
    await assert.rejects(letterbox(new TextEncoder().encode('not an image'), 64, 64), { statusCode: 422 });
  });

  it('builds the model input from the unpadded resize: the same tensor as the padded frame, padding included', async () => {
    const png = await squaresPng(90, 200, [{ x: 10, y: 30, width: 40, height: 50, colour: [200, 10, 90] }]);
    const { rgb: frame } = await letterbox(png, 64, 48);
    const { rgb, transform } = await resizeForInput(png, 64, 48);
    assert.equal(rgb.length, transform.resizedWidth * transform.resizedHeight * 3);
    assert.ok(transform.padLeft > 0 && transform.padTop === 0, 'pillarboxed: padding left and right');
    const into = new Float32Array(3 * 64 * 48).fill(-1);
    assert.equal(toInputTensor(rgb, transform, { into }), into);
    assert.deepEqual(into, toNchw(frame, 64, 48));
    assert.throws(() => toInputTensor(rgb, transform, { into: new Float32Array(10) }), /needs 9216/);
  });

  it('normalises like SAM and pads with zeros after normalising, bottom-right', async () => {
    const png = await squaresPng(100, 50, [{ x: 0, y: 0, width: 100, height: 50, colour: [200, 10, 90] }]);
    const normalise = { mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375] };
    const { rgb, transform } = await resizeForInput(png, 32, 32, { align: 'top-left' });
    const tensor = toInputTensor(rgb, transform, { normalise });
    const { rgb: frame } = await letterbox(png, 32, 32, { align: 'top-left', padValue: 0 });
    assert.deepEqual(tensor, toNchw(frame, 32, 32, normalise, { width: transform.resizedWidth, height: transform.resizedHeight }));
    assert.ok(Math.abs(tensor[0] - (200 - 123.675) / 58.395) < 1e-5);
    assert.equal(tensor[31 * 32 + 5], 0, 'below the image: zero');
  });

  it('reads pixels a word at a time without changing a value, at any row width and byte offset', () => {
    for (const [width, height] of [[7, 5], [8, 3], [13, 11], [1, 4]]) {
      for (const offset of [0, 1, 2, 3]) {
        const bytes = new Uint8Array(offset + width * height * 3).map((_, i) => (i * 37 + offset) % 256);
        const rgb = bytes.subarray(offset);
        const t = letterboxTransform(width, height, 16, 16);
        const padded = new Uint8Array(16 * 16 * 3).fill(114);
        for (let y = 0; y < height; y++) padded.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), ((y + t.padTop) * 16 + t.padLeft) * 3);
        assert.deepEqual(toInputTensor(rgb, { ...t, resizedWidth: width, resizedHeight: height }), toNchw(padded, 16, 16), `${width}×${height} at +${offset}`);
      }
    }
  });
});

describe('embedding cache', () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  const hash = (n: number) => n.toString(16).padStart(64, '0');
  const embedding = (value: number): CachedEmbedding => ({
    dims: [1, 4, 8, 8], data: new Float32Array(256).fill(value),
    originalWidth: 10, originalHeight: 20, resizedWidth: 5, resizedHeight: 10, inputSize: 16,
  });

  it('evicts the least recently used entry beyond its byte budget and serves evicted ones from disk', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'versa-emb-'));
    dirs.push(directory);
    const cache = new EmbeddingCache({ maxBytes: 2 * 1024, directory });
    await cache.set('7', hash(1), embedding(1));
    await cache.set('7', hash(2), embedding(2));
    assert.ok(await cache.get('7', hash(1)));
    await cache.set('7', hash(3), embedding(3));
    assert.equal(cache.stats().entries, 2);
    assert.equal(cache.stats().bytes, 2048);
    const fromDisk = await cache.get('7', hash(2));
    assert.equal(fromDisk?.data[5], 2);
    assert.equal(fromDisk?.originalHeight, 20);
    assert.deepEqual({ ...cache.stats(), bytes: 0 }, { memoryHits: 1, diskHits: 1, misses: 0, diskErrors: 0, bytes: 0, entries: 2 });
    assert.deepEqual((await readdir(directory)).sort(), [`7-${hash(1)}.emb`, `7-${hash(2)}.emb`, `7-${hash(3)}.emb`]);

    const restarted = new EmbeddingCache({ maxBytes: 1 << 20, directory });
    assert.equal((await restarted.get('7', hash(3)))?.data[0], 3);
    assert.equal(await restarted.get('8', hash(3)), null);
    await writeFile(join(directory, `7-${hash(4)}.emb`), 'VEMB garbage');
    assert.equal(await restarted.get('7', hash(4)), null);
    assert.equal(restarted.stats().diskErrors, 1);
    await restarted.forgetModel('7');
    assert.deepEqual(await readdir(directory), []);
    assert.equal(restarted.stats().entries, 0);
  });

  it('refuses keys that could escape the directory', async () => {
    const cache = new EmbeddingCache({ maxBytes: 1024 });
    await assert.rejects(cache.get('../x', hash(1)));
    await assert.rejects(cache.get('1', '../../etc/passwd'));
  });
});
