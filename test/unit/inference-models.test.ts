import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeRle } from '../../src/imaging/rle.js';
import { EmbeddingCache, type CachedEmbedding } from '../../src/inference/embedding-cache.js';
import { InferenceOverloadedError } from '../../src/inference/errors.js';
import { SamPredictor, sha256 } from '../../src/inference/sam.js';
import { SessionPool } from '../../src/inference/session-pool.js';
import type { Box } from '../../src/imaging/rle.js';
import type { Point } from '../../src/inference/contour.js';
import type { YoloLayout } from '../../src/inference/yolo-decode.js';
import { YoloDetector } from '../../src/inference/yolo-detector.js';
import { buildSamDecoder, buildSamEncoder, buildSamEncoderHwc, SAM_TEST_SCORES } from '../helpers/onnx/sam-models.js';
import { OnnxGraph } from '../helpers/onnx/onnx-graph.js';
import { buildSlowModel } from '../helpers/onnx/slow-model.js';
import { exifRotatedJpeg, squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { DUPLICATE_SCORE, V5_CLASS_PROBABILITY, buildYoloModel } from '../helpers/onnx/yolo-models.js';

const RED: Square = { x: 30, y: 40, width: 36, height: 30, colour: [255, 0, 0] };
const GREEN: Square = { x: 120, y: 20, width: 50, height: 70, colour: [0, 204, 0] };

function assertBox(actual: Box, expected: Square, tolerance = 2): void {
  for (const key of ['x', 'y', 'width', 'height'] as const) {
    assert.ok(Math.abs(actual[key] - expected[key]) <= tolerance, `${key}: ${actual[key]} vs ${expected[key]} (${JSON.stringify(actual)})`);
  }
}

function polygonBounds(points: Point[]): Box {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
}

describe('session pool', () => {
  let pool: SessionPool;
  before(() => (pool = new SessionPool({ intraOpThreads: 1, maxPending: 2, retryAfterSeconds: 3 })));
  after(() => pool.close());
  const slowInput = () => ({ x: { type: 'float32' as const, data: new Float32Array(384 * 384).fill(1), dims: [384, 384] } });

  it('runs models off the event loop: timers keep firing during a long run', async () => {
    await pool.load('slow', buildSlowModel());
    await pool.run('slow', slowInput());
    // Counted ticks rather than the worst gap: gaps vary on a loaded CI machine. A loop blocked by each run could
    // tick at most once between runs, so more than two ticks per run shows the runs happen elsewhere.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 2);
    const started = performance.now();
    let runs = 0;
    while (runs < 2 || performance.now() - started < 150) {
      await pool.run('slow', slowInput());
      runs++;
    }
    const took = performance.now() - started;
    clearInterval(timer);
    assert.ok(ticks > 2 * runs, `the event loop ticked ${ticks} times during ${runs} model runs (${took.toFixed(0)} ms)`);
  });

  it('refuses runs beyond the queue bound with a 503 carrying Retry-After, then recovers', async () => {
    const first = pool.run('slow', slowInput());
    const second = pool.run('slow', slowInput());
    await assert.rejects(pool.run('slow', slowInput()), (error: unknown) => {
      assert.ok(error instanceof InferenceOverloadedError);
      assert.equal(error.statusCode, 503);
      assert.equal(error.headers?.['Retry-After'], '3');
      return true;
    });
    assert.equal(pool.pending, 2);
    assert.deepEqual((await first).y.dims, [384, 384]);
    await second;
    assert.equal(pool.pending, 0);
    assert.deepEqual((await pool.run('slow', slowInput())).y.dims, [384, 384]);
  });

  it('loads a model once per id and reports its inputs, outputs and metadata', async () => {
    const bytes = buildYoloModel('v8');
    const first = pool.load('det', bytes);
    assert.equal(pool.load('det', new Uint8Array()), first);
    const info = await first;
    assert.deepEqual(info.inputs, [{ name: 'images', type: 'float32', dims: [1, 3, 128, 128] }]);
    assert.equal(info.outputs[0].name, 'output0');
    assert.equal(info.metadata.task, 'detect');
    await pool.unload('det');
    assert.equal(pool.isLoaded('det'), false);
  });

  it('answers a file that is not ONNX with a 422 and keeps no half-loaded model', async () => {
    await assert.rejects(pool.load('junk', new TextEncoder().encode('definitely not onnx')), { statusCode: 422 });
    assert.equal(pool.isLoaded('junk'), false);
    await assert.rejects(pool.load('missing', '/nonexistent/model.onnx'), { statusCode: 422 });
    await assert.rejects(pool.run('junk', slowInput()), /not loaded/);
  });
});

describe('session pool with lanes', () => {
  const slowInput = () => ({ x: { type: 'float32' as const, data: new Float32Array(384 * 384).fill(1), dims: [384, 384] } });

  it('loads a model in every lane, spreads concurrent runs over them and answers as one lane does', async () => {
    const lanes = new SessionPool({ lanes: 2, intraOpThreads: 1 });
    const single = new SessionPool({ intraOpThreads: 1 });
    try {
      await lanes.load('slow', buildSlowModel());
      const runs = [lanes.run('slow', slowInput()), lanes.run('slow', slowInput()), lanes.run('slow', slowInput())];
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(lanes.laneLoad(), [2, 1]);
      for (const outputs of await Promise.all(runs)) assert.deepEqual(outputs.y.dims, [384, 384]);
      assert.deepEqual(lanes.laneLoad(), [0, 0]);

      const image = await squaresPng(200, 120, [RED, GREEN]);
      const [onLanes, onOne] = await Promise.all(
        [lanes, single].map(async (pool) => {
          const detector = await YoloDetector.load(pool, 'det', buildYoloModel('v8'));
          return Promise.all([1, 2, 3, 4].map(() => detector.detect(image, { confidence: 0.25, iou: 0.5 })));
        }),
      );
      assert.deepEqual(onLanes, onOne);
      assert.equal(onLanes[0].detections.length, 2);
      await lanes.unload('det');
      assert.equal(lanes.isLoaded('det'), false);
    } finally {
      await Promise.all([lanes.close(), single.close()]);
    }
  });
});

describe('YOLO detectors on real onnxruntime', () => {
  let pool: SessionPool;
  let image: Buffer;
  before(async () => {
    pool = new SessionPool({ intraOpThreads: 1 });
    image = await squaresPng(200, 120, [RED, GREEN]);
  });
  after(() => pool.close());

  const expectedConfidence: Record<Exclude<YoloLayout, 'pose' | 'obb'>, number> = { v5: V5_CLASS_PROBABILITY, v8: 1, end2end: 1, 'v8-seg': 1, 'end2end-seg': 1 };
  for (const layout of ['v5', 'v8', 'end2end', 'v8-seg', 'end2end-seg'] as const) {
    it(`${layout}: finds both squares with their class names, mapped back through the letterbox`, async () => {
      const detector = await YoloDetector.load(pool, `yolo-${layout}`, buildYoloModel(layout));
      const result = await detector.detect(image, { confidence: 0.25, iou: 0.5 });
      assert.deepEqual([result.width, result.height], [200, 120]);
      assert.deepEqual(result.detections.map((d) => d.className), ['red', 'green']);
      const [red, green] = result.detections;
      assertBox(red.box, RED);
      assertBox(green.box, GREEN);
      assert.ok(Math.abs(red.confidence - expectedConfidence[layout]) < 0.01, String(red.confidence));
      assert.ok(Math.abs(green.confidence - expectedConfidence[layout] * 0.8) < 0.01, String(green.confidence));
      if (layout === 'v8-seg' || layout === 'end2end-seg') {
        assert.equal(red.polygons?.length, 1);
        assertBox(polygonBounds(red.polygons![0]), RED);
        assertBox(polygonBounds(green.polygons![0]), GREEN);
      } else {
        assert.equal(red.polygons, undefined);
      }
    });
  }

  it('applies the confidence threshold and class-aware NMS', async () => {
    const detector = await YoloDetector.load(pool, 'yolo-v8', buildYoloModel('v8'));
    const strict = await detector.detect(image, { confidence: 0.9, iou: 0.5 });
    assert.deepEqual(strict.detections.map((d) => d.className), ['red']);
    const loose = await detector.detect(image, { confidence: 0.25, iou: 0.99 });
    assert.equal(loose.detections.length, 4, 'the shifted duplicates survive an IoU threshold they do not exceed');
    assert.ok(loose.detections.some((d) => Math.abs(d.confidence - DUPLICATE_SCORE) < 0.01));
    const nested = await squaresPng(200, 120, [{ ...RED, x: 20, y: 20, width: 60, height: 60 }, { ...GREEN, x: 26, y: 26, width: 48, height: 48 }]);
    const classAware = await detector.detect(nested, { confidence: 0.25, iou: 0.5 });
    assert.deepEqual(classAware.detections.map((d) => d.className).sort(), ['green', 'red']);
  });

  it('honours EXIF orientation: boxes and polygons land on the upright picture', async () => {
    const upright: Square[] = [{ ...RED, x: 20, y: 110, width: 40, height: 50 }];
    const jpeg = await exifRotatedJpeg(120, 200, upright);
    for (const layout of ['v8', 'v8-seg', 'end2end-seg'] as const) {
      const detector = await YoloDetector.load(pool, `yolo-${layout}`, buildYoloModel(layout));
      const result = await detector.detect(jpeg, { confidence: 0.25, iou: 0.5 });
      assert.deepEqual([result.width, result.height], [120, 200]);
      assert.equal(result.detections.length, 1);
      assertBox(result.detections[0].box, upright[0]);
      if (layout !== 'v8') assertBox(polygonBounds(result.detections[0].polygons![0]), upright[0]);
    }
  });

  it('finds nothing on an empty image and refuses a non-image with a 422', async () => {
    const detector = await YoloDetector.load(pool, 'yolo-v5', buildYoloModel('v5'));
    assert.deepEqual((await detector.detect(await squaresPng(64, 64, []), { confidence: 0.1, iou: 0.5 })).detections, []);
    await assert.rejects(detector.detect(new Uint8Array([1, 2, 3]), { confidence: 0.1, iou: 0.5 }), { statusCode: 422 });
  });

  it('refuses a model without an image input as a detector', async () => {
    await assert.rejects(YoloDetector.load(pool, 'not-a-detector', buildSlowModel(8, 1)), { statusCode: 422 });
  });

  it('answers 422, not a crash, when the outputs fit no YOLO layout (they are decoded on the inference worker)', async () => {
    const g = new OnnxGraph('pooled-image');
    g.op('AveragePool', [g.input('images', [1, 3, 32, 32])], { kernel_shape: [16, 16], strides: [16, 16] }, 'output0');
    g.output('output0', [1, 3, 2, 2]);
    const detector = await YoloDetector.load(pool, 'four-d-output', g.toBytes());
    await assert.rejects(detector.detect(image, { confidence: 0.25, iou: 0.5 }), { statusCode: 422, message: /Unsupported YOLO output shape/ });
  });

  it('keeps images apart when several are in flight (one input buffer per model is reused between runs)', async () => {
    const detector = await YoloDetector.load(pool, 'yolo-v8', buildYoloModel('v8'));
    const moved: Square[] = [{ ...RED, x: 140, y: 70 }];
    const images = [image, await squaresPng(200, 120, moved), await squaresPng(64, 64, [])];
    const results = await Promise.all([0, 1, 2, 0, 1, 2].map((i) => detector.detect(images[i], { confidence: 0.25, iou: 0.5 })));
    for (const i of [0, 3]) assert.deepEqual(results[i].detections.map((d) => d.className), ['red', 'green']);
    for (const i of [1, 4]) {
      assert.deepEqual(results[i].detections.map((d) => d.className), ['red']);
      assertBox(results[i].detections[0].box, moved[0]);
    }
    for (const i of [2, 5]) assert.deepEqual([results[i].width, results[i].detections.length], [64, 0]);
  });

  it('counts image runs against the queue bound from the moment they arrive, decoding included', async () => {
    const bounded = new SessionPool({ intraOpThreads: 1, maxPending: 2, retryAfterSeconds: 4 });
    try {
      const detector = await YoloDetector.load(bounded, 'yolo-v8', buildYoloModel('v8'));
      const accepted = [detector.detect(image, { confidence: 0.25, iou: 0.5 }), detector.detect(image, { confidence: 0.25, iou: 0.5 })];
      await assert.rejects(detector.detect(image, { confidence: 0.25, iou: 0.5 }), { statusCode: 503 });
      for (const result of await Promise.all(accepted)) assert.equal(result.detections.length, 2);
      assert.equal(bounded.pending, 0);
    } finally {
      await bounded.close();
    }
  });
});

describe('SAM through its ONNX interface', () => {
  let pool: SessionPool;
  let cache: EmbeddingCache;
  let sam: SamPredictor;
  // 256 px wide: the 1024 encoder frame is 4× the image, so each embedding cell covers 4 × 4 pixels.
  const red: Square = { x: 32, y: 40, width: 36, height: 28, colour: [255, 0, 0] };
  const green: Square = { x: 120, y: 20, width: 52, height: 72, colour: [0, 200, 0] };
  before(async () => {
    pool = new SessionPool({ intraOpThreads: 1 });
    cache = new EmbeddingCache({ maxBytes: 32 << 20 });
    sam = await SamPredictor.load(pool, cache, { encoderId: 'enc', encoderSource: buildSamEncoder(), decoderId: 'dec', decoderSource: buildSamDecoder() });
  });
  after(() => pool.close());

  it('segments the clicked region: polygon, column-major RLE and bbox agree with the drawn square', async () => {
    const image = await squaresPng(256, 160, [red, green]);
    const embedding = await sam.embed(image);
    assert.deepEqual(embedding.dims, [1, 256, 64, 64]);
    const onRed = await sam.predict(embedding, { points: [[50, 55]], labels: [1] });
    assert.equal(onRed.score, Math.fround(SAM_TEST_SCORES[1]));
    assertBox(onRed.bbox, red, 1);
    assert.ok(Math.abs(onRed.area - red.width * red.height) < 12, String(onRed.area));
    assert.equal(onRed.polygons.length, 1);
    assertBox(polygonBounds(onRed.polygons[0]), red, 1);
    assert.deepEqual(onRed.rle.size, [160, 256]);
    const decoded = decodeRle(onRed.rle);
    assert.equal(decoded.data[55 * 256 + 50], 1);
    assert.equal(decoded.data[55 * 256 + 150], 0);

    const onGreen = await sam.predict(embedding, { points: [[140, 60], [5, 5]], labels: [1, 0] });
    assertBox(onGreen.bbox, green, 1);
    const background = await sam.predict(embedding, { points: [[5, 5]], labels: [1] });
    assert.equal(background.area, 256 * 160 - onRed.area - onGreen.area);
  });

  it('takes encoders with their pre-processing inside ([H, W, 3] pixels, free or fixed size): the same embedding and masks', async () => {
    const image = await squaresPng(256, 160, [red, green]);
    const reference = await sam.embed(image);
    const variants = [
      { name: 'free', bytes: buildSamEncoderHwc() },
      { name: 'fixed', bytes: buildSamEncoderHwc(1024, { fixed: true }) },
      { name: 'batch', bytes: buildSamEncoderHwc(1024, { fixed: true, batch: true }) },
    ];
    for (const { name, bytes } of variants) {
      const hwc = await SamPredictor.load(pool, new EmbeddingCache({ maxBytes: 32 << 20 }), { encoderId: `enc-hwc-${name}`, encoderSource: bytes, decoderId: 'dec', decoderSource: buildSamDecoder() });
      assert.equal(hwc.inputSize, 1024);
      const embedding = await hwc.embed(image);
      assert.deepEqual(embedding.dims, reference.dims);
      let largest = 0;
      for (let i = 0; i < embedding.data.length; i++) largest = Math.max(largest, Math.abs(embedding.data[i] - reference.data[i]));
      assert.ok(largest < 1e-3, `${name}: embedding differs by ${largest}`);
      const onRed = await hwc.predict(embedding, { points: [[50, 55]], labels: [1] });
      assertBox(onRed.bbox, red, 1);
    }
  });

  it('sends each embedding to the worker once while it is kept there: clicks across more images than it keeps stay right', async () => {
    const squares = [0, 1, 2, 3, 4, 5].map((i): Square => ({ x: 8 + i * 36, y: 20 + (i % 3) * 36, width: 28, height: 24, colour: [255, 0, 0] }));
    const embeddings: CachedEmbedding[] = [];
    for (const square of squares) embeddings.push(await sam.embed(await squaresPng(256, 160, [square])));
    // Forwards, backwards and again: the first clicks send the embedding, repeats name it, evicted ones are sent again.
    for (const order of [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [0, 0, 5, 2, 2, 1]]) {
      const masks = await Promise.all(order.map((i) => sam.predict(embeddings[i], { points: [[squares[i].x + 10, squares[i].y + 10]], labels: [1] })));
      masks.forEach((mask, n) => assertBox(mask.bbox, squares[order[n]], 1));
    }
  });

  it('runs the encoder once per image: repeated and concurrent requests share the cached embedding', async () => {
    const image = await squaresPng(256, 160, [green]);
    const before = cache.stats();
    const [a, b] = await Promise.all([sam.embed(image), sam.embed(image)]);
    assert.equal(a, b);
    assert.equal(await sam.embed(image, sha256(image)), a);
    const stats = cache.stats();
    assert.equal(stats.misses - before.misses, 2);
    assert.equal(stats.memoryHits - before.memoryHits, 1);
    assert.equal(stats.entries - before.entries, 1);
  });

  it('maps clicks and masks through EXIF orientation', async () => {
    const upright: Square = { x: 20, y: 140, width: 40, height: 60, colour: [255, 0, 0] };
    const jpeg = await exifRotatedJpeg(160, 256, [upright]);
    const mask = await sam.predict(await sam.embed(jpeg), { points: [[40, 170]], labels: [1] });
    assert.deepEqual(mask.rle.size, [256, 160]);
    assertBox(mask.bbox, upright, 2);
  });

  it('refuses models without the SAM interface with a 422', async () => {
    await assert.rejects(
      SamPredictor.load(pool, cache, { encoderId: 'enc', encoderSource: buildSamEncoder(), decoderId: 'bad-dec', decoderSource: buildSlowModel(8, 1) }),
      { statusCode: 422, message: /missing input\(s\) image_embeddings, point_coords/ },
    );
  });
});
