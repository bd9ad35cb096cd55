import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Annotation, ClassSpec } from '../../src/formats/dataset.js';
import { WRITERS } from '../../src/formats/writers/index.js';
import { importZip } from '../helpers/dataset-import.js';
import { assertClose } from '../helpers/shapes-roundtrip.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';

const W = 120;
const H = 80;

/** Every shape kind Versa stores, with attribute values and a group. */
const SHAPES: Annotation[] = [
  { type: 'bbox', className: 'car', attributes: { occluded: true, colour: 'red' }, groupId: 1, geometry: { x: 5, y: 5, width: 30, height: 20 } },
  { type: 'bbox', className: 'car', attributes: { occluded: false, colour: 'blue' }, geometry: { x: 60, y: 30, width: 30, height: 14, rotation: 30 } },
  { type: 'polygon', className: 'car', groupId: 1, geometry: { points: [[6, 6], [34, 6], [34, 24]] } },
  { type: 'polygon', className: 'road', geometry: { points: [[0, 50], [60, 50], [60, 79], [0, 79]], holes: [[[10, 60], [20, 60], [20, 70], [10, 70]]] } },
  { type: 'polyline', className: 'road', geometry: { points: [[1, 1], [50, 5], [90, 40]] } },
  { type: 'points', className: 'road', geometry: { points: [[3, 3], [30, 30]] } },
  { type: 'ellipse', className: 'car', geometry: { cx: 90, cy: 20, rx: 12, ry: 6, rotation: 20 } },
  { type: 'classification', className: 'road', geometry: {} },
  { type: 'keypoints', className: 'person', geometry: { points: [[20, 30, 2], [26, 30, 1], [23, 40, 2]] } },
];
/** The person class's skeleton: the jsonl lines carry it on each keypoints annotation, and the import takes it back. */
const SKELETON = { points: ['left_eye', 'right_eye', 'nose'], edges: [[0, 2], [1, 2]], flip_pairs: [[0, 1]] };

type Line = { image: string; split: string | null; annotations: { class: string; type: string; geometry: unknown; attributes?: object; group_id?: number; skeleton?: unknown }[] };

/** The jsonl export of a project: its lines by image, each image's annotations in a stable order. */
async function exportJsonl(client: Client, projectId: number): Promise<Line[]> {
  const out = await client.post(`/api/projects/${projectId}/export`, { format: 'jsonl' });
  assert.equal(out.status, 200, JSON.stringify(out.body));
  const text = ((await client.get(out.body.url)).raw as Buffer).toString('utf8');
  const lines = text.trim().split('\n').map((l) => JSON.parse(l) as Line);
  for (const line of lines) line.annotations.sort((a, b) => `${a.type}${a.class}${JSON.stringify(a.geometry)}`.localeCompare(`${b.type}${b.class}${JSON.stringify(b.geometry)}`));
  return lines.sort((a, b) => a.image.localeCompare(b.image));
}

describe('jsonl import (issue 25): an import reads what the jsonl export writes', () => {
  let t: TestApp;
  let alice: Client;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  it('export jsonl, import it with its images into a new project: the same annotations, attributes and groups', async () => {
    const images = await Promise.all([40, 200].map((g) => sharp({ create: { width: W, height: H, channels: 3, background: { r: g, g: 90, b: 30 } } }).png().toBuffer()));
    // The first project comes from a Datumaro archive (which holds every shape, attribute and group).
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await WRITERS.datumaro.write({
      classes: ['car', 'road', 'person'],
      classSpecs: new Map<string, ClassSpec>([
        ['car', { attributes: [{ name: 'occluded', type: 'checkbox' }, { name: 'colour', type: 'select', values: ['red', 'blue'] }] }],
        ['person', { skeleton: SKELETON as ClassSpec['skeleton'] }],
      ]),
      items: [
        { split: 'train', fileName: 'a.png', source: { open: () => { const s = new PassThrough(); s.end(images[0]); return s; } }, width: W, height: H, annotations: SHAPES },
        { split: 'valid', fileName: 'b.png', source: { open: () => { const s = new PassThrough(); s.end(images[1]); return s; } }, width: W, height: H, annotations: SHAPES.slice(0, 2) },
      ],
    }, out);
    const first = await importZip(alice, Buffer.concat(chunks));
    assert.equal(first.status, 201, JSON.stringify(first.body));
    // Datumaro has no flip pairs: give the skeleton its pair here, so that the jsonl round trip carries all of it.
    const person = ((await alice.get(`/api/projects/${first.body.id}/classes`)).body as { id: number; name: string }[]).find((c) => c.name === 'person')!;
    assert.equal((await alice.patch(`/api/classes/${person.id}`, { skeleton: SKELETON })).status, 200);
    const exported = await exportJsonl(alice, first.body.id);
    assert.equal(exported.length, 2);
    assert.ok(exported[0].annotations.some((a) => a.attributes && a.group_id), JSON.stringify(exported[0]));
    assert.deepEqual(exported[0].annotations.find((a) => a.type === 'keypoints')?.skeleton, SKELETON);

    const text = exported.map((l) => JSON.stringify(l)).join('\n');
    const second = await importZip(alice, await buildZip([
      { name: 'export.jsonl', data: `${text}\n` },
      { name: `images/${exported[0].image}`, data: images[0] },
      { name: `images/${exported[1].image}`, data: images[1] },
    ]));
    assert.equal(second.status, 201, JSON.stringify(second.body));
    assert.equal(second.body.import.format, 'jsonl');
    assert.equal(second.body.import.skipped_count, 0, JSON.stringify(second.body.import.skipped));
    const classes = (await alice.get(`/api/projects/${second.body.id}/classes`)).body as { name: string; skeleton: unknown }[];
    assert.deepEqual(classes.find((c) => c.name === 'person')?.skeleton, SKELETON, 'the skeleton came back with the keypoints');
    const again = await exportJsonl(alice, second.body.id);
    assert.deepEqual(again.map((l) => [l.image, l.split]), exported.map((l) => [l.image, l.split]));
    for (const [i, line] of again.entries()) {
      assert.equal(line.annotations.length, exported[i].annotations.length, line.image);
      line.annotations.forEach((a, j) => {
        const want = exported[i].annotations[j];
        assert.deepEqual([a.class, a.type, a.attributes, a.group_id], [want.class, want.type, want.attributes, want.group_id], `${line.image} annotation ${j}`);
        assertClose(a.geometry, want.geometry, `${line.image} annotation ${j}`);
      });
    }
  });

  it('an annotation of no Versa type, one without a class and a line naming an image the archive lacks are skipped with why', async () => {
    const lines = [
      { image: 'a.png', split: 'train', annotations: [
        { class: 'car', type: 'bbox', geometry: { x: 1, y: 1, width: 10, height: 10 } },
        { class: 'person', type: 'keypoints', geometry: { points: [[2, 2, 2], [5, 6, 1], [0, 0, 0]] } },
        { class: 'car', type: 'cuboid', geometry: {} },
        { type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } },
      ] },
      { image: 'ghost.png', split: 'train', annotations: [{ class: 'car', type: 'bbox', geometry: { x: 1, y: 1, width: 10, height: 10 } }] },
    ];
    const res = await importZip(alice, await buildZip([
      { name: 'labels.jsonl', data: lines.map((l) => JSON.stringify(l)).join('\n') },
      { name: 'a.png', data: await sharp({ create: { width: 20, height: 20, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer() },
    ]));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.import.skipped.map((s: { item: string; reason: string }) => [s.item, s.reason]), [
      ['line 1 annotation 3', 'Versa has no annotation type "cuboid"'],
      ['line 1 annotation 4', 'the annotation has no class'],
      ['image ghost.png', 'the labels name this image but its file is not in the dataset'],
      ['label 1 of ghost.png (bbox, class "car")', 'its image is not in the dataset'],
    ]);
    assert.deepEqual(res.body.import.counts.kept.annotations, { bbox: 1, keypoints: 1 });
  });

  it('a line that is not JSON refuses the archive, naming the line', async () => {
    const res = await importZip(alice, await buildZip([
      { name: 'labels.jsonl', data: '{"image": "a.png", "annotations": []}\n{not json\n' },
      { name: 'a.png', data: await sharp({ create: { width: 20, height: 20, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer() },
    ]));
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.detail, /labels\.jsonl line 2 is not valid JSON/);
  });
});
