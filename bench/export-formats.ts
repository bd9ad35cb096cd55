/**
 * Export writers on synthetic data, no HTTP and no database:
 *   1. COCO JSON for N images / 10·N box annotations (default 100k / 1M): wall time and peak RSS.
 *   2. YOLO zip of M real JPEG files (default 2,000 copies of one generated image) against `zip -0 -r` over the same
 *      files: wall time and the ratio (target ≥ 0.8× zip's speed).
 *      Both zips run `zipRounds` times, alternating which goes first; the medians are compared.
 * Usage: npx tsx bench/export-formats.ts [images=100000] [zipImages=2000] [zipRounds=3]
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import type { DatasetItem } from '../src/formats/dataset.js';
import { writeCocoJson } from '../src/formats/writers/coco-writer.js';
import { writeYolo } from '../src/formats/writers/yolo-writer.js';
import { Random } from '../src/lib/random.js';

const imageCount = Number(process.argv[2] ?? 100_000);
const zipImages = Number(process.argv[3] ?? 2_000);
const zipRounds = Number(process.argv[4] ?? 3);
const CLASSES = ['car', 'bus', 'truck', 'person', 'bicycle'];

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);

function* syntheticItems(count: number, path: string, perImage: number): Generator<DatasetItem> {
  const random = new Random(42);
  for (let i = 0; i < count; i++) {
    const annotations: DatasetItem['annotations'] = [];
    for (let k = 0; k < perImage; k++) {
      const x = random.uniform(0, 600);
      const y = random.uniform(0, 440);
      annotations.push({ type: 'bbox', className: random.pick(CLASSES), geometry: { x, y, width: random.uniform(5, 40), height: random.uniform(5, 40) } });
    }
    yield { split: i % 10 === 0 ? 'valid' : 'train', fileName: `img_${i}.jpg`, source: { path }, width: 640, height: 480, annotations };
  }
}

const dir = await mkdtemp(join(tmpdir(), 'versa-bench-'));
try {
  // Noise makes the JPEG as large as a photo (~150 KB), so the zip comparison measures bytes, not per-file overhead.
  const jpeg = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .jpeg({ quality: 85 })
    .toBuffer();
  const imagePath = join(dir, 'one.jpg');
  await writeFile(imagePath, jpeg);

  peakRss = process.memoryUsage().rss;
  let started = performance.now();
  const cocoPath = join(dir, 'coco.json');
  const stats = await writeCocoJson({ classes: CLASSES, items: syntheticItems(imageCount, imagePath, 10) }, createWriteStream(cocoPath));
  const cocoSeconds = (performance.now() - started) / 1000;
  console.log('| writer | images | annotations | seconds | output MB | peak RSS MB |');
  console.log('|---|---|---|---|---|---|');
  console.log(
    `| coco json | ${stats.imageCount} | ${stats.annotationCount} | ${cocoSeconds.toFixed(2)} | ${((await stat(cocoPath)).size / 1e6).toFixed(1)} | ${(peakRss / 1e6).toFixed(0)} |`,
  );
  await rm(cocoPath);

  // Same files for both: a real folder of JPEGs and label files, zipped by writeYolo (ZipWriter) and by `zip -0`.
  const tree = join(dir, 'tree');
  await mkdir(join(tree, 'train/images'), { recursive: true });
  await mkdir(join(tree, 'train/labels'), { recursive: true });
  const items: DatasetItem[] = [];
  for (const item of syntheticItems(zipImages, imagePath, 10)) {
    const path = join(tree, 'train/images', item.fileName);
    await writeFile(path, jpeg);
    await writeFile(join(tree, 'train/labels', item.fileName.replace('.jpg', '.txt')), '0 0.5 0.5 0.1 0.1\n'.repeat(10));
    items.push({ ...item, split: 'train', source: { path } });
  }
  // Alternating rounds (writer first, then zip first, …) and medians: on a shared machine one run of each is noise.
  const yoloTimes: number[] = [];
  const zipTimes: number[] = [];
  let zipError: Error | undefined;
  const timeYolo = async () => {
    await rm(join(dir, 'yolo.zip'), { force: true });
    const start = performance.now();
    await writeYolo({ classes: CLASSES, projectType: 'object_detection', items }, createWriteStream(join(dir, 'yolo.zip')));
    yoloTimes.push((performance.now() - start) / 1000);
  };
  const timeZip = async () => {
    await rm(join(dir, 'plain.zip'), { force: true });
    const start = performance.now();
    zipError = spawnSync('zip', ['-0', '-r', '-q', join(dir, 'plain.zip'), 'train'], { cwd: tree }).error;
    zipTimes.push((performance.now() - start) / 1000);
  };
  peakRss = process.memoryUsage().rss;
  for (let round = 0; round < zipRounds; round++) {
    if (round % 2 === 0) {
      await timeYolo();
      await timeZip();
    } else {
      await timeZip();
      await timeYolo();
    }
  }
  const yoloSeconds = median(yoloTimes);
  const zipSeconds = median(zipTimes);
  if (zipError) console.log('`zip` is not installed; no baseline');
  console.log();
  console.log('| zip | files | seconds | MB |');
  console.log('|---|---|---|---|');
  console.log(`| yolo writer (ZipWriter, STORE), median of ${zipRounds} | ${zipImages * 2} | ${yoloSeconds.toFixed(2)} | ${((await stat(join(dir, 'yolo.zip'))).size / 1e6).toFixed(1)} |`);
  if (!zipError) {
    console.log(`| zip -0 -r, median of ${zipRounds} | ${zipImages * 2} | ${zipSeconds.toFixed(2)} | ${((await stat(join(dir, 'plain.zip'))).size / 1e6).toFixed(1)} |`);
    console.log(`\nyolo writer speed = ${(zipSeconds / yoloSeconds).toFixed(2)}× zip -0 (target ≥ 0.8×); peak RSS ${(peakRss / 1e6).toFixed(0)} MB`);
  }
} finally {
  clearInterval(sampler);
  await rm(dir, { recursive: true, force: true });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
