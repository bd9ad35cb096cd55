/**
 * What measuring quality features at ingest adds to the per-image work of an upload: the ingest path's decode +
 * thumbnail (probeImage) alone vs followed by the feature measurement (ImageFeatureRecorder.measure: thumbnail
 * decode, statistics, dHash), on the same photos-like JPEGs, alternating in blocks within each round.
 * Usage: npx tsx bench/quality-ingest.ts [images=200] [rounds=5]
 */
import sharp from 'sharp';
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
    for (const bytes of images) await probeImage(bytes, identifyImage(bytes), limits);
    off += performance.now() - t0;
    t0 = performance.now();
    for (const bytes of images) {
      const probed = await probeImage(bytes, identifyImage(bytes), limits);
      await recorder.measure(bytes, 'image/jpeg', probed.thumbnail);
    }
    on += performance.now() - t0;
  }
  bare.push(off / count);
  withFeatures.push(on / count);
  ratios.push(on / off);
}
console.log('| round | ingest ms/image | with features ms/image | ratio |');
console.log('|---|---|---|---|');
for (let i = 0; i < rounds; i++) console.log(`| ${i + 1} | ${bare[i].toFixed(2)} | ${withFeatures[i].toFixed(2)} | ${ratios[i].toFixed(3)} |`);
console.log(`\nmedian ratio ${median(ratios).toFixed(3)} (target ≤ 1.10)`);
