/**
 * Where the quality features cost CPU (issue 32, item 10): CPU per image (process.cpuUsage, every thread) of the
 * upload's probe in one sharp pipeline (the default), of the probe that also measures the features (INGEST_FEATURES=1),
 * and of the lazy fill the first quality report does for an image it lacks (the stored file fitted, then measured, two
 * at a time as ImageFeatureRecorder.fillMissing), on the 1280×960 JPEGs bench/ingest.ts uploads. CPU rather than wall
 * time, so that a shared machine's load moves the figures less.
 * Usage: npx tsx bench/feature-cost.ts [images=60] [rounds=5]
 */
import { fitPixels } from '../src/imaging/fitted-pixels.js';
import { measureImageFeatures, tailOf } from '../src/imaging/image-features.js';
import { identifyImage, probeImage } from '../src/imaging/image-probe.js';
import { configureSharp } from '../src/imaging/sharp-config.js';
import { forEachConcurrently } from '../src/lib/batches.js';
import { generateShapesImage } from '../src/synthetic/index.js';
import { median } from './lib/server.js';

const count = Number(process.argv[2] ?? 60);
const rounds = Number(process.argv[3] ?? 5);
configureSharp();
const images: Buffer[] = [];
for (let i = 0; i < count; i++) images.push((await generateShapesImage({ seed: `ingest/${i}`, width: 1280, height: 960, masks: false })).data);
const limits = { maxPixels: 100_000_000 };
const measure = (bytes: Buffer) => (pixels: Parameters<typeof measureImageFeatures>[0]) => measureImageFeatures(pixels, { mimeType: 'image/jpeg', tail: tailOf(bytes) });
const variants: [name: string, inFlight: number, work: (bytes: Buffer) => Promise<unknown>][] = [
  ['upload probe, one pipeline (default)', 4, (b) => probeImage(b, identifyImage(b), limits)],
  ['upload probe measuring the features (INGEST_FEATURES=1)', 4, (b) => probeImage(b, identifyImage(b), limits, measure(b))],
  ['lazy fill at the first report', 2, async (b) => measure(b)(await fitPixels(b))],
];
const cpu = variants.map(() => [] as number[]);
for (let round = 0; round < rounds; round++) {
  for (const [v, [, inFlight, work]] of variants.entries()) {
    const start = process.cpuUsage();
    await forEachConcurrently(images, inFlight, async (bytes) => void (await work(bytes)));
    const used = process.cpuUsage(start);
    cpu[v].push((used.user + used.system) / 1000 / count);
  }
}
console.log('| work | CPU ms/image by round | median |');
console.log('|---|---|---|');
variants.forEach(([name], v) => console.log(`| ${name} | ${cpu[v].map((x) => x.toFixed(2)).join(', ')} | ${median(cpu[v]).toFixed(2)} |`));
