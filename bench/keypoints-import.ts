/**
 * Import of a COCO keypoints zip (person_keypoints style: one category with 17 named points and its skeleton; every
 * instance with a box and 17 `[x, y, v]` points, about a third of them not labelled) through POST
 * /api/projects/import, in process through Fastify's inject, `rounds` times; the median. Beside it, the same zip with
 * the keypoints removed (boxes only), so the cost of the keypoints themselves shows. Instances are spread over
 * `perImage` instances per 320×240 image (default 100: the clock measures labels, not image ingest).
 * Target (issue 25): 100,000 instances × 17 points import in < 30 s.
 * Usage: npx tsx bench/keypoints-import.ts [instances=100000] [rounds=3] [perImage=100]
 */
import sharp from 'sharp';
import { multipart } from '../test/helpers/multipart.js';
import { buildZip } from '../test/helpers/zip-build.js';
import { inProcessApp, median, withServerNodeFlags } from './lib/server.js';

await withServerNodeFlags();

const instances = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 3);
const perImage = Number(process.argv[4] ?? 100);
const imageCount = Math.ceil(instances / perImage);
const POINTS = ['nose', 'left_eye', 'right_eye', 'left_ear', 'right_ear', 'left_shoulder', 'right_shoulder', 'left_elbow', 'right_elbow', 'left_wrist', 'right_wrist', 'left_hip', 'right_hip', 'left_knee', 'right_knee', 'left_ankle', 'right_ankle'];
const SKELETON = [[16, 14], [14, 12], [17, 15], [15, 13], [12, 13], [6, 12], [7, 13], [6, 7], [6, 8], [7, 9], [8, 10], [9, 11], [2, 3], [1, 2], [1, 3], [2, 4], [3, 5], [4, 6], [5, 7]];

const { app, authorization, close } = await inProcessApp('keypoints', { MAX_UPLOAD_MB: '2000' });
try {

  const images: Buffer[] = [];
  for (let i = 0; i < imageCount; i++) {
    images.push(await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: i % 256, g: (i >> 8) % 256, b: 77 } } }).jpeg({ quality: 80 }).toBuffer());
  }
  /** Instance n: a box somewhere on its image and 17 points inside it (every third point not labelled). */
  const annotation = (n: number, withKeypoints: boolean) => {
    const x = 10 + ((n * 37) % 240);
    const y = 10 + ((n * 53) % 150);
    const keypoints: number[] = [];
    let labelled = 0;
    for (let k = 0; k < 17; k++) {
      if ((n + k) % 3 === 0) keypoints.push(0, 0, 0);
      else {
        keypoints.push(x + ((k * 7) % 60), y + ((k * 11) % 80), 1 + ((n + k) % 2));
        labelled++;
      }
    }
    const base = { id: n + 1, image_id: Math.floor(n / perImage) + 1, category_id: 1, bbox: [x, y, 60, 80], area: 4800, iscrowd: 0, segmentation: [] };
    return withKeypoints ? { ...base, keypoints, num_keypoints: labelled } : base;
  };
  const zipOf = async (withKeypoints: boolean) => {
    const coco = {
      categories: [{ id: 1, name: 'person', supercategory: 'person', keypoints: POINTS, skeleton: SKELETON }],
      images: images.map((_, i) => ({ id: i + 1, file_name: `img_${i}.jpg`, width: 320, height: 240 })),
      annotations: Array.from({ length: instances }, (_, n) => annotation(n, withKeypoints)),
    };
    return buildZip([{ name: 'annotations/person_keypoints_train2017.json', data: JSON.stringify(coco) }, ...images.map((data, i) => ({ name: `images/train2017/img_${i}.jpg`, data, compress: false }))]);
  };
  const keypointsZip = await zipOf(true);
  const boxesZip = await zipOf(false);

  const importRound = async (zip: Buffer, label: string, round: number): Promise<number> => {
    const body = multipart([{ name: 'file', filename: 'bench.zip', data: zip, contentType: 'application/zip' }], { name: `${label} ${round}` });
    const started = performance.now();
    const res = await app.inject({ method: 'POST', url: '/api/projects/import', headers: { ...body.headers, authorization }, payload: body.payload });
    const seconds = (performance.now() - started) / 1000;
    const out = res.json();
    if (res.statusCode !== 201 || out.annotation_count !== instances) throw new Error(`import: ${res.statusCode} ${res.body.slice(0, 300)}`);
    if (label === 'keypoints' && out.import.counts.kept.annotations.keypoints !== instances) throw new Error(`keypoints kept: ${JSON.stringify(out.import.counts)}`);
    return seconds;
  };

  const withKeypoints: number[] = [];
  const boxesOnly: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always runs on a warmer process.
    if (round % 2 === 0) {
      withKeypoints.push(await importRound(keypointsZip, 'keypoints', round));
      boxesOnly.push(await importRound(boxesZip, 'boxes', round));
    } else {
      boxesOnly.push(await importRound(boxesZip, 'boxes', round));
      withKeypoints.push(await importRound(keypointsZip, 'keypoints', round));
    }
  }
  console.log(`| round | ${instances} instances × 17 keypoints (s) | same boxes without keypoints (s) |`);
  console.log('|---|---|---|');
  for (let i = 0; i < rounds; i++) console.log(`| ${i + 1} | ${withKeypoints[i].toFixed(2)} | ${boxesOnly[i].toFixed(2)} |`);
  console.log(`\nCOCO keypoints import: median ${median(withKeypoints).toFixed(2)} s for ${instances} instances × 17 points on ${imageCount} images (target < 30 s); boxes only ${median(boxesOnly).toFixed(2)} s`);
} finally {
  await close();
}
