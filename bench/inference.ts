/**
 * Inference benchmark (issue 6): a YOLOv8n-sized detector end to end (decode JPEG, letterbox, run, decode, NMS)
 * against bare `session.run` on a pre-made tensor, images/s, and SAM click → mask with a cached embedding on a
 * decoder of SAM's size. Random weights: timings only. Prints tables; asserts nothing.
 *
 *   npx tsx bench/inference.ts            full run (640 input, three image kinds, 10 rounds of 8-image blocks per variant)
 *   npx tsx bench/inference.ts --smoke    small sizes, a few iterations (checks the bench itself works)
 *   --in-flight N                         images kept in flight on the batch pool (default: two per lane)
 */
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { Random } from '../src/lib/random.js';
import { EmbeddingCache } from '../src/inference/embedding-cache.js';
import { resizeForInput, toInputTensor } from '../src/inference/letterbox.js';
import { SamPredictor } from '../src/inference/sam.js';
import { batchPoolShape, SessionPool } from '../src/inference/session-pool.js';
import { decodeYolo } from '../src/inference/yolo-decode.js';
import { YoloDetector } from '../src/inference/yolo-detector.js';
import { buildSamEncoder } from '../test/helpers/onnx/sam-models.js';
import { buildSamDecoderLike, buildYolov8nLike } from './inference-models.js';

const smoke = process.argv.includes('--smoke');
const inputSize = smoke ? 320 : 640;
/** The detector variants take turns in blocks of `perRound` images, `rounds` times. */
const rounds = smoke ? 2 : 10;
const perRound = smoke ? 4 : 8;
const clicks = smoke ? 3 : 30;
const threads = availableParallelism();
/** Images an auto-annotate job keeps in flight on the batch pool (ModelRuntime: two per lane); `--in-flight N` overrides. */
const inFlightArg = process.argv.indexOf('--in-flight');
const inFlight = (lanes: number) => (inFlightArg > 0 ? Number(process.argv[inFlightArg + 1]) : 2 * lanes);

/**
 * A photo-like JPEG: smooth shading with per-pixel noise of `noise` grey levels per channel, quality 90. The noise
 * sets how many bits each pixel costs, and with it the decoder's work: 6 gives about 0.7 bits per pixel, where the
 * photos of the shared datasets lie (0.45–0.92 bits per pixel, all 640 × 640 Roboflow exports); 40 gives 2.7, a
 * grainy high-ISO frame, kept as the worst case.
 */
async function photoLikeJpeg(width: number, height: number, seed: number, noise = 6): Promise<Buffer> {
  const random = new Random(seed);
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const shade = 90 + 60 * Math.sin(x / 37) * Math.cos(y / 53);
      pixels[i] = shade + random.int(0, noise);
      pixels[i + 1] = shade * 0.8 + random.int(0, noise);
      pixels[i + 2] = shade * 0.6 + random.int(0, noise);
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

async function samples(runs: number, body: (i: number) => Promise<unknown>): Promise<number[]> {
  const taken: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await body(i);
    taken.push(performance.now() - start);
  }
  return taken;
}

async function time<T>(runs: number, body: (i: number) => Promise<T>): Promise<{ median: number; mean: number }> {
  const taken = await samples(runs, body);
  return { median: median(taken), mean: taken.reduce((a, b) => a + b, 0) / taken.length };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const times = (value: number) => `${value.toFixed(2)}×`;

/** The images the detector is timed on: the shared datasets' size and a larger frame, and a grainy worst case. */
const IMAGE_KINDS = [
  { label: '640 × 640, 0.7 bits/px (like the shared datasets)', width: 640, height: 640, noise: 6 },
  { label: '1280 × 720, 0.7 bits/px', width: 1280, height: 720, noise: 6 },
  { label: '1280 × 720, grainy (2.7 bits/px)', width: 1280, height: 720, noise: 40 },
];

async function detectorBench(): Promise<void> {
  const model = buildYolov8nLike(inputSize);
  console.log(`\nDetector: YOLOv8n-like, input [1, 3, ${inputSize}, ${inputSize}], ${(model.params / 1e6).toFixed(2)} M params, ${model.gflops.toFixed(1)} GFLOPs, ${threads} intra-op threads, ${rounds} blocks × ${perRound} images per variant`);
  const options = { confidence: 0.25, iou: 0.45 };
  const session = await ort.InferenceSession.create(model.bytes, { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
  // The two pools the service runs (ModelRuntime): one image at a time with every core, and lanes for jobs.
  const shape = batchPoolShape(threads);
  const pools = { single: new SessionPool({ intraOpThreads: threads, maxPending: 64 }), batch: new SessionPool({ ...shape, maxPending: 64 }), inFlight: inFlight(shape.lanes) };
  const detectors = {
    single: await YoloDetector.load(pools.single, 'bench-yolo', model.bytes),
    batch: await YoloDetector.load(pools.batch, 'bench-yolo', model.bytes),
  };
  for (const kind of IMAGE_KINDS) {
    const images = await Promise.all([1, 2, 3, 4].map((seed) => photoLikeJpeg(kind.width, kind.height, seed, kind.noise)));
    const bitsPerPixel = (images.reduce((sum, image) => sum + image.length, 0) * 8) / (images.length * kind.width * kind.height);
    console.log(`\n${kind.label}: ${bitsPerPixel.toFixed(2)} bits per pixel`);
    await detectorRounds(session, pools, detectors, images, options);
  }
  await session.release();
  await Promise.all([pools.single.close(), pools.batch.close()]);
}

/**
 * Ways to get one image's detections, each timed in blocks of `perRound` images:
 * - bare `session.run` on a pre-made tensor, on this thread with every core (the reference);
 * - `pool.run` of that tensor on the single-image pool (what the worker thread costs);
 * - end to end one image at a time on the single-image pool (latency: JPEG bytes → detections);
 * - `pool.run` of pre-made tensors on the batch pool, `inFlight` at a time (bare runs in the lane layout);
 * - end to end on the batch pool, `inFlight` at a time, as an auto-annotate job runs (throughput: time per image =
 *   wall time / images). This is the figure the target is about.
 * The machine is shared, so the variants take turns in short blocks and each ratio is taken within its round,
 * against the mean of the bare blocks before and after it: a burst of load from elsewhere then hits the reference
 * and the variant alike. Reported: median ms per image over all blocks, the median (and spread) of the per-round
 * ratios, and the fastest block of each variant with its ratio to the fastest bare block.
 */
async function detectorRounds(
  session: ort.InferenceSession,
  pools: { single: SessionPool; batch: SessionPool; inFlight: number },
  detectors: { single: YoloDetector; batch: YoloDetector },
  images: Buffer[],
  options: { confidence: number; iou: number },
): Promise<void> {
  const { rgb, transform } = await resizeForInput(images[0], inputSize, inputSize);
  const pixels = toInputTensor(rgb, transform);
  const tensor = new ort.Tensor('float32', pixels, [1, 3, inputSize, inputSize]);
  const output = (await session.run({ images: tensor })).output0;
  const decoded = { type: 'float32' as const, data: output.data as Float32Array, dims: [...output.dims] };
  const candidates = decodeYolo([decoded], transform, { confidence: 0.25, iou: 1, maxDetections: 1e9 }).length;

  // Each pooled run gets its own copy of the tensor (it is handed over to the worker); copies are made untimed.
  const copies: Float32Array[] = [];
  const pooledRun = (pool: SessionPool) => pool.run('bench-yolo', { images: { type: 'float32', data: copies.pop() ?? new Float32Array(pixels), dims: [1, 3, inputSize, inputSize] } }, { transfer: true });
  let detections = 0;
  let next = 0;
  const detect = async (detector: YoloDetector) => (detections = (await detector.detect(images[next++ % images.length], options)).detections.length);
  const bareRun = () => session.run({ images: tensor });

  const keys = ['bare', 'pooled', 'sequential', 'batchBare', 'batch'] as const;
  type Key = (typeof keys)[number];
  const results = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<Key, number[]>;
  const ratios = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<Key, number[]>;
  /** `count` calls of `body`, `concurrency` at a time; ms per call. */
  const timed = async (count: number, concurrency: number, body: () => Promise<unknown>) => {
    let left = count;
    const start = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await body();
    }));
    return (performance.now() - start) / count;
  };
  // Switching between sessions costs the first runs after the switch (cold caches, parked threads), which a pool
  // never pays in service (it runs image after image): each block starts with an untimed warm-up of its own.
  const block = async (key: Key, concurrency: number, body: () => Promise<unknown>) => {
    for (let i = 0; i <= perRound; i++) copies.push(new Float32Array(pixels));
    await timed(concurrency, concurrency, body);
    const perImage = await timed(perRound, concurrency, body);
    results[key].push(perImage);
    return perImage;
  };
  await block('bare', 1, bareRun);
  results.bare.length = 0;
  for (let round = 0; round < rounds; round++) {
    const before = await block('bare', 1, bareRun);
    const taken = {
      pooled: await block('pooled', 1, () => pooledRun(pools.single)),
      sequential: await block('sequential', 1, () => detect(detectors.single)),
      batchBare: await block('batchBare', pools.inFlight, () => pooledRun(pools.batch)),
      batch: await block('batch', pools.inFlight, () => detect(detectors.batch)),
    };
    const after = await block('bare', 1, bareRun);
    for (const [key, value] of Object.entries(taken)) ratios[key as Key].push(value / ((before + after) / 2));
  }
  const fastestBare = Math.min(...results.bare);
  const row = (key: Key) => ({
    'ms per image': ms(median(results[key])),
    'images/s': (1000 / median(results[key])).toFixed(1),
    'vs bare (median of rounds)': key === 'bare' ? '1.00×' : times(median(ratios[key])),
    'vs bare (range)': key === 'bare' ? '' : `${times(Math.min(...ratios[key]))}–${times(Math.max(...ratios[key]))}`,
    'fastest block': ms(Math.min(...results[key])),
    'fastest vs bare': times(Math.min(...results[key]) / fastestBare),
  });
  const lanes = `${pools.batch.laneCount} lanes × ${pools.batch.intraOpThreads} thread${pools.batch.intraOpThreads > 1 ? 's' : ''}, ${pools.inFlight} in flight`;
  console.table({
    [`bare session.run (pre-made tensor, this thread, ${threads} threads)`]: row('bare'),
    'pool.run, single-image pool (same tensor)': row('pooled'),
    'end to end, single-image pool, one at a time (latency)': row('sequential'),
    [`pool.run, batch pool (same tensor; ${lanes})`]: row('batchBare'),
    [`end to end, batch pool (${lanes}): throughput`]: row('batch'),
  });
  console.log(`${candidates} candidates above 0.25 before NMS, ${detections} detections after NMS`);
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
