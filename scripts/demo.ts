/**
 * Fills a running Versa instance with a sample project through its HTTP API, so that a new user sees something
 * real at once: 40 generated images of coloured shapes with their boxes and outlines, five classes and a split.
 * Usage: npm run demo [-- http://127.0.0.1:8000]   (or VERSA_URL=…; DEMO_EMAIL / DEMO_PASSWORD to choose the account)
 */
import { datasetImage, SHAPE_CLASSES, shapeGeometry } from '../src/synthetic/index.js';

const base = (process.argv[2] ?? process.env.VERSA_URL ?? 'http://127.0.0.1:8000').replace(/\/$/, '');
const email = process.env.DEMO_EMAIL ?? 'demo@versa.local';
const password = process.env.DEMO_PASSWORD ?? 'versa-demo-password';
const IMAGES = 40;
const BATCH = 10;

let token = '';
async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : (null as T);
}

async function main(): Promise<void> {
  try {
    await fetch(`${base}/api/health`);
  } catch {
    throw new Error(`no Versa instance answers at ${base}; start one with \`npm start\` first`);
  }
  const registered = await fetch(`${base}/api/auth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password, display_name: 'Demo' }),
  });
  if (registered.status !== 201 && registered.status !== 409) throw new Error(`register answered ${registered.status}: ${await registered.text()}`);
  token = (await api<{ token: string }>('POST', '/api/auth/login', { email, password })).token;

  const project = await api('POST', '/api/projects', {
    name: 'Shapes demo',
    description: 'Generated images of coloured shapes with exact boxes and outlines.',
    project_type: 'instance_segmentation',
  });
  const classIds = new Map<string, number>();
  for (const shapeClass of SHAPE_CLASSES) {
    const created = await api('POST', `/api/projects/${project.id}/classes`, { name: shapeClass.name, color: shapeClass.color });
    classIds.set(shapeClass.name, created.id);
  }

  let annotations = 0;
  for (let start = 0; start < IMAGES; start += BATCH) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(BATCH, IMAGES - start) }, (_, k) => datasetImage('demo', start + k, { width: 800, height: 600, masks: false })),
    );
    const form = new FormData();
    for (const image of batch) form.append('files', new Blob([image.data as Uint8Array<ArrayBuffer>]), image.filename);
    const res = await fetch(`${base}/api/projects/${project.id}/images`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    const uploaded = await res.json();
    if (!res.ok) throw new Error(`upload answered ${res.status}: ${JSON.stringify(uploaded)}`);
    await Promise.all(
      batch.map(async (image, k) => {
        const imageId = uploaded.images[k].id;
        for (const [i, shape] of image.shapes.entries()) {
          // Alternate boxes and outlines so that both kinds show in the editor.
          const type = i % 2 === 0 ? 'polygon' : 'bbox';
          await api('POST', `/api/images/${imageId}/annotations`, {
            class_id: classIds.get(shape.className), annotation_type: type, geometry: shapeGeometry(shape, type), confidence: null, source: 'manual',
          });
          annotations++;
        }
      }),
    );
    process.stdout.write(`\ruploaded ${Math.min(start + BATCH, IMAGES)}/${IMAGES} images`);
  }
  await api('POST', `/api/projects/${project.id}/splits?train=70&valid=20&test=10&strategy=stratified&seed=1`);

  console.log(`\n\nThe demo project is ready: ${IMAGES} images, ${annotations} annotations, ${SHAPE_CLASSES.length} classes.`);
  console.log(`  open      ${base}/projects/${project.id}`);
  console.log(`  log in as ${email} / ${password}`);
}

main().catch((err) => {
  console.error(`demo failed: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
