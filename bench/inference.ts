/**
 * Inference benchmark (issue 6): a YOLOv8n-sized detector end to end (decode JPEG, letterbox, run, decode, NMS)
 * against bare `session.run` on a pre-made tensor, images/s, and SAM click → mask with a cached embedding on a
 * decoder of SAM's size. Random weights: timings only. Prints tables; asserts nothing.
 *
 *   npx tsx bench/inference.ts            full run (640 input, 30 images)
 *   npx tsx bench/inference.ts --smoke    small sizes, a few iterations (checks the bench itself works)
 */
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { Random } from '../src/lib/random.js';
import { EmbeddingCache } from '../src/inference/embedding-cache.js';
import { letterbox, toNchw } from '../src/inference/letterbox.js';
import { SamPredictor } from '../src/inference/sam.js';
import { SessionPool } from '../src/inference/session-pool.js';
import { decodeYolo } from '../src/inference/yolo-decode.js';
import { YoloDetector } from '../src/inference/yolo-detector.js';
import { buildSamEncoder } from '../test/helpers/onnx/sam-models.js';
import { buildSamDecoderLike, buildYolov8nLike } from './inference-models.js';

const smoke = process.argv.includes('--smoke');
const inputSize = smoke ? 320 : 640;
const iterations = smoke ? 3 : 30;
const clicks = smoke ? 3 : 30;
const threads = availableParallelism();

async function photoLikeJpeg(width: number, height: number, seed: number): Promise<Buffer> {
  const random = new Random(seed);
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const shade = 90 + 60 * Math.sin(x / 37) * Math.cos(y / 53);
      pixels[i] = shade + random.int(0, 40);
      pixels[i + 1] = shade * 0.8 + random.int(0, 40);
      pixels[i + 2] = shade * 0.6 + random.int(0, 40);
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

async function time<T>(runs: number, body: (i: number) => Promise<T>): Promise<{ median: number; mean: number; last: T }> {
  const samples: number[] = [];
  let last!: T;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    last = await body(i);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)], mean: samples.reduce((a, b) => a + b, 0) / samples.length, last };
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

async function detectorBench(): Promise<void> {
  const model = buildYolov8nLike(inputSize);
  console.log(`\nDetector: YOLOv8n-like, input [1, 3, ${inputSize}, ${inputSize}], ${(model.params / 1e6).toFixed(2)} M params, ${model.gflops.toFixed(1)} GFLOPs, ${threads} intra-op threads`);
  const jpeg = await photoLikeJpeg(1280, 720, 1);
  const images = await Promise.all([1, 2, 3, 4].map((seed) => photoLikeJpeg(1280, 720, seed)));

  const session = await ort.InferenceSession.create(model.bytes, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
  const { rgb, transform } = await letterbox(jpeg, inputSize, inputSize);
  const tensor = new ort.Tensor('float32', toNchw(rgb, inputSize, inputSize), [1, 3, inputSize, inputSize]);
  await session.run({ images: tensor });
  const bare = await time(iterations, () => session.run({ images: tensor }));
  await session.release();

  const pool = new SessionPool({ intraOpThreads: threads, maxPending: 64 });
  const detector = await YoloDetector.load(pool, 'bench-yolo', model.bytes);
  await pool.run('bench-yolo', { images: { type: 'float32', data: new Float32Array(tensor.data as Float32Array), dims: tensor.dims.slice() } });
  const pooled = await time(iterations, () =>
    pool.run('bench-yolo', { images: { type: 'float32', data: new Float32Array(tensor.data as Float32Array), dims: tensor.dims.slice() } }, { transfer: true }),
  );
  const candidates = decodeYolo([pooled.last.output0], transform, { confidence: 0.25, iou: 1, maxDetections: 1e9 }).length;
  await detector.detect(jpeg, { confidence: 0.25, iou: 0.45 });
  const endToEnd = await time(iterations, (i) => detector.detect(images[i % images.length], { confidence: 0.25, iou: 0.45 }));

  // Throughput with two images in flight: the next image's JPEG decode and letterbox overlap the current run.
  const start = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < iterations) await detector.detect(images[next++ % images.length], { confidence: 0.25, iou: 0.45 });
  };
  await Promise.all([worker(), worker()]);
  const throughput = iterations / ((performance.now() - start) / 1000);
  await pool.close();

  console.table({
    'bare session.run (pre-made tensor, this thread)': { median: ms(bare.median), 'vs bare': '1.00×' },
    'pool.run (worker thread, tensor transferred)': { median: ms(pooled.median), 'vs bare': `${(pooled.median / bare.median).toFixed(2)}×` },
    'end to end, one image at a time': { median: ms(endToEnd.median), 'vs bare': `${(endToEnd.median / bare.median).toFixed(2)}×` },
    'end to end, two in flight (per image)': { median: ms(1000 / throughput), 'vs bare': `${(1000 / throughput / bare.median).toFixed(2)}×` },
  });
  console.log(`images/s: ${(1000 / endToEnd.median).toFixed(1)} sequential, ${throughput.toFixed(1)} pipelined; ` +
    `${candidates} candidates above 0.25 before NMS, ${endToEnd.last.detections.length} detections after`);
}

async function samBench(): Promise<void> {
  const decoder = buildSamDecoderLike();
  console.log(`\nSAM decoder: SAM-interface, ${(decoder.params / 1e6).toFixed(2)} M params, embedding [1, 256, 64, 64], image 1280 × 720`);
  const pool = new SessionPool({ intraOpThreads: threads });
  const cache = new EmbeddingCache({ maxBytes: 64 << 20 });
  const sam = await SamPredictor.load(pool, cache, { encoderId: 'enc', encoderSource: buildSamEncoder(), decoderId: 'dec', decoderSource: decoder.bytes });
  const image = await photoLikeJpeg(1280, 720, 7);
  const embedStart = performance.now();
  const embedding = await sam.embed(image);
  const firstEmbed = performance.now() - embedStart;
  const random = new Random(3);
  const click = () => sam.predict(embedding, { points: [[random.int(0, 1279), random.int(0, 719)]], labels: [1] });
  await click();
  const feeds = {
    image_embeddings: { type: 'float32' as const, data: embedding.data, dims: embedding.dims },
    point_coords: { type: 'float32' as const, data: new Float32Array([900, 500, 0, 0]), dims: [1, 2, 2] },
    point_labels: { type: 'float32' as const, data: new Float32Array([1, -1]), dims: [1, 2] },
    mask_input: { type: 'float32' as const, data: new Float32Array(65536), dims: [1, 1, 256, 256] },
    has_mask_input: { type: 'float32' as const, data: new Float32Array(1), dims: [1] },
    orig_im_size: { type: 'float32' as const, data: new Float32Array([720, 1280]), dims: [2] },
  };
  const decoderOnly = await time(clicks, () => pool.run('dec', feeds));
  const cold = await time(clicks, async () => click());
  const cached = await time(clicks, async () => sam.predict(await sam.embed(image), { points: [[640, 360], [100, 100]], labels: [1, 0] }));
  await pool.close();
  console.table({
    'decoder pool.run alone (embedding copied to the worker)': { median: ms(decoderOnly.median), mean: ms(decoderOnly.mean) },
    'click → mask (decoder, RLE, polygon)': { median: ms(cold.median), mean: ms(cold.mean) },
    'click → mask incl. embedding cache lookup + sha256': { median: ms(cached.median), mean: ms(cached.mean) },
  });
  console.log(`first embed of the image (test encoder, not SAM's ViT): ${ms(firstEmbed)}; cache ${JSON.stringify(cache.stats())}`);
}

await detectorBench();
await samBench();
