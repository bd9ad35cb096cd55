import sharp from 'sharp';
import { Random } from '../../src/lib/random.js';
import { multipart } from './multipart.js';
import type { Client } from './test-app.js';

/**
 * A smooth random picture (a coarse random colour grid, enlarged): distinct seeds give images far apart in
 * perceptual hash, and a re-encoded or resized copy stays near its source.
 */
export async function smoothImage(seed: number, width = 160, height = 120, quality = 90): Promise<Buffer> {
  const random = new Random(seed * 7919 + 17);
  const grid = Buffer.alloc(6 * 5 * 3);
  for (let i = 0; i < grid.length; i++) grid[i] = random.int(0, 255);
  return sharp(grid, { raw: { width: 6, height: 5, channels: 3 } })
    .resize(width, height, { kernel: 'cubic', fit: 'fill' })
    .jpeg({ quality })
    .toBuffer();
}

/** The same picture re-encoded at another quality and size: a near duplicate. */
export async function nearCopy(image: Buffer, width: number, height: number): Promise<Buffer> {
  return sharp(image).resize(width, height, { fit: 'fill' }).jpeg({ quality: 70 }).toBuffer();
}

export async function createProject(client: Client, name = 'versions'): Promise<number> {
  const res = await client.post('/api/projects', { name, project_type: 'object_detection' });
  if (res.status !== 201) throw new Error(`create project: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Uploads images (name → bytes); returns the created image records in request order. */
export async function uploadImages(client: Client, projectId: number, files: { name: string; data: Buffer }[]): Promise<any[]> {
  const { payload, headers } = multipart(files.map((f) => ({ filename: f.name, data: f.data, contentType: 'image/jpeg' })));
  const res = await client.request({ method: 'POST', url: `/api/projects/${projectId}/images`, payload, headers });
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.images;
}

export async function createClass(client: Client, projectId: number, name: string): Promise<number> {
  const res = await client.post(`/api/projects/${projectId}/classes`, { name });
  if (res.status !== 201) throw new Error(`create class: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

export async function addBox(client: Client, imageId: number, classId: number, box = { x: 10, y: 10, width: 40, height: 30 }): Promise<any> {
  const res = await client.post(`/api/images/${imageId}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: box });
  if (res.status !== 201) throw new Error(`annotate: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
