/**
 * What measuring quality features at ingest adds to the per-image work of an upload: an ingest without features
 * (header read, then decode + upright + fit + WebP thumbnail in one sharp pipeline) vs Versa's ingest, whose probe
 * keeps the fitted pixels the thumbnail is encoded from and measures them while the thumbnail is encoded
 * (ImageFeatureRecorder.measure: statistics and dHash, no decode), as ImagesService's upload does, on the same
 * photos-like JPEGs, alternating in blocks within each round.
 * Usage: npx tsx bench/quality-ingest.ts [images=200] [rounds=5]
 */
import sharp from 'sharp';
import { THUMBNAIL_SIZE } from '../src/imaging/fitted-pixels.js';
import { identifyImage, probeImage } from '../src/imaging/image-probe.js';
import { configureSharp } from '../src/imaging/sharp-config.js';
import { ImageFeatureRecorder } from '../src/modules/quality/image-features.service.js';
import { median } from './lib/server.js';

configureSharp();
const count = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);
const recorder = new ImageFeatureRecorder(null as never, null as never);
const images = await Promise.all(
  Array.from({ length: 20 }, (_, i) =>
    sharp({ create: { width: 1280, height: 960, channels: 3, background: { r: 40 + i * 9, g: 120, b: 200 - i * 7 }, noise: { type: 'gaussian', mean: 128, sigma: 30 } } })
      .blur(1.5)
      .jpeg({ quality: 85 })
      .toBuffer(),
  ),
);
const limits = { maxPixels: 100_000_000 };
const ratios: number[] = [];
const bare: number[] = [];
const withFeatures: number[] = [];
for (let round = 0; round < rounds; round++) {
  let off = 0;
  let on = 0;
  for (let block = 0; block < count / 20; block++) {
    let t0 = performance.now();
    for (const bytes of images) await thumbnailOnly(bytes);
    off += performance.now() - t0;
    t0 = performance.now();
    for (const bytes of images) await probeImage(bytes, identifyImage(bytes), limits, (pixels) => recorder.measure(bytes, 'image/jpeg', pixels));
    on += performance.now() - t0;
  }
  bare.push(off / count);
  withFeatures.push(on / count);
  ratios.push(on / off);
}
console.log('| round | ingest without features ms/image | Versa ingest with features ms/image | ratio |');
console.log('|---|---|---|---|');
for (let i = 0; i < rounds; i++) console.log(`| ${i + 1} | ${bare[i].toFixed(2)} | ${withFeatures[i].toFixed(2)} | ${ratios[i].toFixed(3)} |`);
console.log(`\nmedian ratio ${median(ratios).toFixed(3)} (target ≤ 1.10)`);

/** The ingest work without features: the header, then the thumbnail in one pipeline. */
async function thumbnailOnly(bytes: Buffer): Promise<Buffer> {
  identifyImage(bytes);
  const image = sharp(bytes, { limitInputPixels: false });
  await image.metadata();
  return image.autoOrient().resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true }).webp({ effort: 2 }).toBuffer();
}
