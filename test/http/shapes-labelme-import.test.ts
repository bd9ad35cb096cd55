import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip, type ZipEntry } from '../helpers/zip-build.js';

const INTEROP = new URL('../fixtures/interop/', import.meta.url).pathname;

async function folderEntries(root: string, prefix = ''): Promise<ZipEntry[]> {
  const out: ZipEntry[] = [];
  for (const e of await readdir(join(root, prefix), { withFileTypes: true })) {
    const name = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await folderEntries(root, name)));
    else if (e.name !== 'SOURCE.md') out.push({ name, data: await readFile(join(root, name)) });
  }
  return out;
}

describe('LabelMe import accounting: every item read is kept or listed as skipped, with why', () => {
  let t: TestApp;
  let alice: Client;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  it('LabelMe 3.0 XML (real export): both masks are kept, the blue one too (it was refused as having no pixels)', async () => {
    const res = await importZip(alice, await buildZip(await folderEntries(join(INTEROP, 'labelme-3.0'))));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.skipped_count, 0, JSON.stringify(res.body.import.skipped));
    assert.deepEqual(res.body.import.counts.kept.annotations, { polygon: 4, mask: 2, bbox: 1 });
  });

  it('lists each thing it cannot keep: unknown shape type, shape without label, too few points, bad mask PNG, shape off the image, non-boolean flag, missing image', async () => {
    const jpeg = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#777' } }).jpeg().toBuffer();
    const shape = (shape_type: string, points: number[][], extra: object = {}) => ({ label: 'x', points, group_id: null, description: '', shape_type, flags: {}, ...extra });
    const doc = (imagePath: string, shapes: object[]) => JSON.stringify({ version: '5.5.0', flags: {}, imagePath, imageData: null, shapes });
    const zip = await buildZip([
      { name: 'a.jpg', data: jpeg },
      {
        name: 'a.json',
        data: doc('a.jpg', [
          shape('rectangle', [[1, 1], [10, 10]], { flags: { parked: true, colour: 'red' } }),
          shape('cuboid', [[1, 1]]),
          shape('polygon', [[1, 1], [2, 2]], { label: '' }),
          shape('linestrip', [[1, 1]]),
          shape('mask', [[1, 1], [3, 3]], { mask: 'bm90IGEgcG5n' }),
          shape('point', [[400, 400]]),
        ]),
      },
      { name: 'b.json', data: doc('gone.jpg', [shape('circle', [[1, 1], [2, 2]])]) },
    ]);
    const res = await importZip(alice, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const { counts, skipped, skipped_count } = res.body.import;
    for (const kind of ['images', 'attributes'] as const) assert.equal(counts.read[kind], counts.kept[kind] + counts.skipped[kind], kind);
    for (const type of Object.keys(counts.read.annotations)) {
      assert.equal(counts.read.annotations[type], (counts.kept.annotations[type] ?? 0) + (counts.skipped.annotations[type] ?? 0), type);
    }
    assert.deepEqual(counts.kept.annotations, { bbox: 1 });
    assert.deepEqual(counts.skipped.annotations, { cuboid: 1, polygon: 1, linestrip: 1, mask: 1, points: 1, circle: 1 });
    assert.deepEqual([counts.kept.images, counts.skipped.images], [1, 1]);
    assert.deepEqual([counts.kept.attributes, counts.skipped.attributes], [1, 1]);
    assert.equal(skipped_count, skipped.length);
    const reasons = skipped.map((s: { file: string; item: string; reason: string }) => `${s.file}: ${s.item} — ${s.reason}`).join('\n');
    for (const expected of [
      /a\.json: shape 2 \(cuboid.*not a LabelMe shape type/,
      /a\.json: shape 3 .*no label/,
      /a\.json: shape 4 \(linestrip.*at least 2 points/,
      /a\.json: shape 5 \(mask.*PNG cannot be read/,
      /a\.jpg: annotation 2 \(points.*outside the 40×30 image/,
      /flag "colour" of shape 1.*true or false/,
      /b\.json: image "gone\.jpg" — its file is not in the archive/,
      /b\.json: shape 1 \(label "x"\) — its image is not in the archive/,
    ]) assert.match(reasons, expected);
  });
});
