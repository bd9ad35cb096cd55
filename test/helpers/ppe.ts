import assert from 'node:assert/strict';
import type { Square } from './onnx/test-images.js';
import { squaresPng } from './onnx/test-images.js';
import { buildYoloModel } from './onnx/yolo-models.js';
import { multipart } from './multipart.js';
import type { Client } from './test-app.js';

/** The protective-equipment detector of the pipeline tests: red pixels are a person, green a helmet, blue a vest. */
export const PPE_CLASSES = ['person', 'helmet', 'vest'];
const PERSON: [number, number, number] = [255, 0, 0];
const HELMET: [number, number, number] = [0, 255, 0];
const VEST: [number, number, number] = [0, 0, 255];

/** One person per image (the test detector reports one box per class), wearing what is asked for. */
export function ppeImage(variant: number, wears: { helmet: boolean; vest: boolean }): Promise<Buffer> {
  const squares: Square[] = [{ x: 40 + variant, y: 20, width: 60, height: 90, colour: PERSON }];
  if (wears.helmet) squares.push({ x: 55 + variant, y: 22, width: 20, height: 12, colour: HELMET });
  if (wears.vest) squares.push({ x: 50 + variant, y: 60, width: 30, height: 30, colour: VEST });
  return squaresPng(160, 120, squares);
}

export async function uploadPpeDetector(client: Client, projectId: number, name = 'ppe-detector'): Promise<{ id: number; name: string }> {
  const res = await client.request({
    method: 'POST',
    url: `/api/projects/${projectId}/models/upload`,
    ...multipart([{ name: 'file', filename: `${name}.onnx`, data: Buffer.from(buildYoloModel('v8', undefined, PPE_CLASSES)) }], { name }),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

export async function uploadImages(client: Client, projectId: number, images: Buffer[]): Promise<number[]> {
  const res = await client.request({
    method: 'POST',
    url: `/api/projects/${projectId}/images`,
    ...multipart(images.map((data, i) => ({ filename: `img${i}.png`, data, contentType: 'image/png' }))),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return (res.body.images as { id: number }[]).map((i) => i.id);
}
