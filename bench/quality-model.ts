/**
 * The model-assisted checks against batch auto-annotate (issue 14: the checks cost no more than one auto-annotate
 * pass over the same images). N photo-like 640 × 480 JPEGs and a YOLOv8n-sized detector (random weights: timings
 * only) in one project, through the HTTP API of the compiled server: (a) `POST /auto-annotate/yolo` over every image,
 * followed to the end of its job; (b) `POST /quality` with the three model-assisted checks, which predict on every
 * image and write nothing. Both at confidence 0.5 (the checks' default `min_confidence`); the two take turns, the
 * first alternating by round. Target: (b) / (a) ≤ 1.
 * Usage: npx tsx bench/quality-model.ts [images=200] [rounds=3]
 */
import { rm } from 'node:fs/promises';
import sharp from 'sharp';
import { buildYolov8nLike } from './inference-models.js';
import { median, startServer, withServerNodeFlags } from './lib/server.js';

await withServerNodeFlags();

const count = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);
const CONFIDENCE = 0.5;

const server = await startServer({}, undefined, { compiled: true });
const auth = { authorization: `Bearer ${server.token}` };
try {
  const project = await server.api('POST', '/api/projects', { name: 'model checks bench', project_type: 'object_detection' });
  for (let first = 0; first < count; first += 20) {
    const form = new FormData();
    for (let i = first; i < Math.min(count, first + 20); i++) {
      const jpeg = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: (i * 37) % 255, g: 120, b: 200 - (i % 100) }, noise: { type: 'gaussian', mean: 128, sigma: 20 } } })
        .jpeg({ quality: 85 })
        .toBuffer();
      form.append('files', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), `img_${i}.jpg`);
    }
    const res = await fetch(`${server.url}/api/projects/${project.id}/images`, { method: 'POST', headers: auth, body: form });
    if (!res.ok) throw new Error(`upload → ${res.status} ${await res.text()}`);
  }
  const model = new FormData();
  model.append('name', 'detector');
  model.append('file', new Blob([new Uint8Array(buildYolov8nLike(640).bytes)]), 'detector.onnx');
  const uploaded = await fetch(`${server.url}/api/projects/${project.id}/models/upload`, { method: 'POST', headers: auth, body: model });
  if (!uploaded.ok) throw new Error(`model upload → ${uploaded.status} ${await uploaded.text()}`);
  const detector = await uploaded.json();

  const timed = async (run: () => Promise<unknown>) => {
    const t0 = performance.now();
    await run();
    return (performance.now() - t0) / 1000;
  };
  const autoAnnotate = async () => {
    const started = await server.api('POST', `/api/projects/${project.id}/auto-annotate/yolo`, { model: detector.id, confidence: CONFIDENCE, iou: 0.45 });
    if (!started.job_id) return;
    for (;;) {
      const job = await server.api('GET', `/api/jobs/${started.job_id}`);
      if (job.status === 'succeeded') return;
      if (job.status === 'failed' || job.status === 'cancelled') throw new Error(`auto-annotate job ${job.status}: ${JSON.stringify(job)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  let predicted = 0;
  const checks = async () => {
    const report = await server.api('POST', `/api/projects/${project.id}/quality`, { checks: ['missing_labels', 'unsupported_labels', 'class_disagreements'] });
    const skipped = report.checks.find((c: { skipped?: string }) => c.skipped);
    if (skipped) throw new Error(`model checks skipped: ${skipped.skipped}`);
    predicted = report.checks.length;
  };
  const annotate: number[] = [];
  const check: number[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      annotate.push(await timed(autoAnnotate));
      check.push(await timed(checks));
    } else {
      check.push(await timed(checks));
      annotate.push(await timed(autoAnnotate));
    }
  }
  console.log(`${count} images, ${predicted} model-assisted checks`);
  console.log('| round | auto-annotate s | model-assisted checks s | ratio |');
  console.log('|---|---|---|---|');
  for (let i = 0; i < rounds; i++) console.log(`| ${i + 1} | ${annotate[i].toFixed(2)} | ${check[i].toFixed(2)} | ${(check[i] / annotate[i]).toFixed(3)} |`);
  console.log(`\nmedian ratio ${median(check.map((c, i) => c / annotate[i])).toFixed(3)} (target ≤ 1)`);
} finally {
  await server.stop();
  await rm(server.dataDir, { recursive: true, force: true });
}
