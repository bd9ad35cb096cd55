/**
 * Import of a COCO zip of N generated JPEGs (default 10,000, 5 boxes each) through POST /api/projects/import, against
 * the ingest throughput of the upload route (POST /api/projects/{id}/images, 50 files per request) on the same
 * images, both in-process through Fastify's inject, `rounds` times alternating which goes first; the median of the
 * per-round ratios. Target: import ≥ 0.8× the upload route's images/s.
 * Usage: npx tsx bench/import.ts [images=10000] [rounds=3]
 */
import sharp from 'sharp';
import { multipart } from '../test/helpers/multipart.js';
import { buildZip } from '../test/helpers/zip-build.js';
import { inProcessApp, median, withServerNodeFlags } from './lib/server.js';

// The service runs in this process, so this process gets the server's node flags.
await withServerNodeFlags();

const count = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 3);
const { app, authorization, close } = await inProcessApp('import', { MAX_UPLOAD_MB: '1000' });
try {

  // Distinct 320×240 photos-like JPEGs (noise), as both runs need different bytes per image.
  const images: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    images.push(await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: i % 256, g: (i >> 8) % 256, b: 77 }, noise: { type: 'gaussian', mean: 100, sigma: 30 } } }).jpeg({ quality: 80 }).toBuffer());
  }
  const coco = {
    categories: [{ id: 1, name: 'thing' }, { id: 2, name: 'other' }],
    images: images.map((_, i) => ({ id: i + 1, file_name: `img_${i}.jpg`, width: 320, height: 240 })),
    annotations: images.flatMap((_, i) => Array.from({ length: 5 }, (_, k) => ({ id: i * 5 + k + 1, image_id: i + 1, category_id: 1 + (k % 2), bbox: [10 + k * 20, 10, 30, 40], area: 1200, iscrowd: 0, segmentation: [] }))),
  };
  const zip = await buildZip([{ name: 'train/_annotations.coco.json', data: JSON.stringify(coco) }, ...images.map((data, i) => ({ name: `train/img_${i}.jpg`, data, compress: false }))]);

  const uploadRound = async (round: number): Promise<number> => {
    const project = (await app.inject({ method: 'POST', url: '/api/projects', headers: { authorization }, payload: { name: `upload bench ${round}` } })).json();
    const started = performance.now();
    for (let i = 0; i < count; i += 50) {
      const body = multipart(images.slice(i, i + 50).map((data, k) => ({ filename: `img_${i + k}.jpg`, data, contentType: 'image/jpeg' })));
      const res = await app.inject({ method: 'POST', url: `/api/projects/${project.id}/images`, headers: { ...body.headers, authorization }, payload: body.payload });
      if (res.statusCode !== 201) throw new Error(`upload: ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
    return (performance.now() - started) / 1000;
  };
  const importRound = async (round: number): Promise<number> => {
    const body = multipart([{ name: 'file', filename: 'bench.zip', data: zip, contentType: 'application/zip' }], { name: `import bench ${round}` });
    const started = performance.now();
    const res = await app.inject({ method: 'POST', url: '/api/projects/import', headers: { ...body.headers, authorization }, payload: body.payload });
    const seconds = (performance.now() - started) / 1000;
    if (res.statusCode !== 201 || res.json().image_count !== count) throw new Error(`import: ${res.statusCode} ${res.body.slice(0, 200)}`);
    return seconds;
  };

  const uploads: number[] = [];
  const imports: number[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      uploads.push(await uploadRound(round));
      imports.push(await importRound(round));
    } else {
      imports.push(await importRound(round));
      uploads.push(await uploadRound(round));
    }
  }
  console.log(`| round | upload images/s (50 per request) | import images/s (COCO zip, ${count * 5} boxes) | ratio |`);
  console.log('|---|---|---|---|');
  for (let i = 0; i < rounds; i++) {
    console.log(`| ${i + 1} | ${(count / uploads[i]).toFixed(0)} | ${(count / imports[i]).toFixed(0)} | ${(uploads[i] / imports[i]).toFixed(2)} |`);
  }
  console.log(`\nimport throughput = ${median(uploads.map((u, i) => u / imports[i])).toFixed(2)}× the upload route (median of ${rounds} rounds; target ≥ 0.8×)`);
} finally {
  await close();
}
