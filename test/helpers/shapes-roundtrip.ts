import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import sharp from 'sharp';
import type { Annotation, DatasetItem, DatasetSource, DatasetToWrite, WriteStats } from '../../src/formats/dataset.js';
import { geometryBox } from '../../src/imaging/geometry.js';
import { zipEntries } from './zip-entries.js';

/** A grey PNG of the given size. */
export async function greyImage(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 128, g: 128, b: 128 } } }).png().toBuffer();
}

/** Writes `dataset` with `write`, unzips what came out into a new folder and answers it. */
export async function writeToFolder(write: (d: DatasetToWrite, out: PassThrough) => Promise<WriteStats>, dataset: DatasetToWrite): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise((resolve) => out.on('end', resolve));
  await write(dataset, out);
  await done;
  const root = await mkdtemp(join(tmpdir(), 'versa-shapes-'));
  for (const [name, data] of await zipEntries(Buffer.concat(chunks))) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), data);
  }
  return root;
}

export async function collect(source: DatasetSource): Promise<DatasetItem[]> {
  const items: DatasetItem[] = [];
  for await (const item of source.items()) items.push(item);
  return items;
}

/** Numbers within 0.5 (px or degrees) at every place of two geometries of the same structure. */
export function assertClose(actual: unknown, expected: unknown, path = 'geometry'): void {
  if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', `${path}: ${JSON.stringify(actual)}`);
    const diff = Math.abs((actual as number) - expected);
    assert.ok(diff <= 0.5 || Math.abs(diff - 360) <= 0.5, `${path}: ${actual} is not within 0.5 of ${expected}`);
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${path}: ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`);
    expected.forEach((e, i) => assertClose((actual as unknown[])[i], e, `${path}[${i}]`));
    return;
  }
  if (expected && typeof expected === 'object') {
    assert.ok(actual && typeof actual === 'object', `${path}: ${JSON.stringify(actual)}`);
    assert.deepEqual(Object.keys(actual as object).sort(), Object.keys(expected).sort(), `${path} keys`);
    for (const [k, v] of Object.entries(expected)) assertClose((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
    return;
  }
  assert.deepEqual(actual, expected, path);
}

/** The envelope of an annotation (for shapes a format converts, e.g. polygons with holes to masks). */
export const envelope = (a: Annotation) => geometryBox(a.type, a.geometry);
