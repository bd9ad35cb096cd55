import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decode as decodeRlePack } from '@thi.ng/rle-pack';
import sharp from 'sharp';
import type { Annotation } from '../../src/formats/dataset.js';
import { readDataset } from '../../src/formats/readers/index.js';
import { readDatumaro } from '../../src/formats/readers/datumaro-reader.js';
import { readLabelStudio } from '../../src/formats/readers/labelstudio-reader.js';
import { writeDatumaro } from '../../src/formats/writers/datumaro-writer.js';
import { rleArea } from '../../src/imaging/rle.js';
import { assertClose, collect, writeToFolder } from '../helpers/shapes-roundtrip.js';

/** Fixtures copied from the tools' own repositories (see each folder's SOURCE.md). */
const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

const skippedOf = (source: { ledger?: { skippedList: { item: string; reason: string }[] } }) => source.ledger!.skippedList.map((s) => [s.item, s.reason]);

describe('shapes-real-exports: Datumaro', () => {
  it('a skeleton as Datumaro writes it (x, y, v triples, per-point attributes) is one keypoints instance; its sublabels are point names, not classes', async () => {
    const source = await readDatumaro(join(FIXTURES, 'datumaro-real/with_skeleton'));
    assert.deepEqual(source.classes, ['skeleton-label']);
    assert.equal(source.projectType, 'keypoint_detection');
    // joints [[2, 3], [1, 2]] are 1-based over the points category's order [point1, point3, point2].
    assert.deepEqual(source.classSpecs?.get('skeleton-label')?.skeleton, { points: ['point1-label', 'point3-label', 'point2-label'], edges: [[1, 2], [0, 1]], flip_pairs: [] });
    assert.deepEqual(source.classSpecs?.get('skeleton-label')?.attributes?.map((spec) => [spec.name, spec.type]), [['occluded', 'checkbox'], ['keyframe', 'checkbox']]);
    const [item] = await collect(source);
    assert.deepEqual([item.fileName, item.width, item.height], ['100.jpg', 6, 10]);
    assert.deepEqual(item.annotations, [
      { type: 'keypoints', className: 'skeleton-label', attributes: { occluded: false, keyframe: false }, geometry: { points: [[0.9, 3.53, 2], [2.45, 7.6, 2], [5.2, 2.5, 2]] } },
    ]);
    assert.deepEqual(skippedOf(source), [
      ['attribute "point3-attribute-checkbox" of point "point3-label" of item "100" annotation 0 (skeleton)', 'Versa keeps no attributes per keypoint'],
      ['attribute "point2-attribute-text" of point "point2-label" of item "100" annotation 0 (skeleton)', 'Versa keeps no attributes per keypoint'],
    ]);
  });

  it("Datumaro's diverse asset: what it can keep comes through; captions, an unlabelled box, a wrong-size mask, an unknown label id and an item without its image are each listed", async () => {
    const source = await readDatumaro(join(FIXTURES, 'datumaro-real/diverse'));
    assert.deepEqual(source.classes, ['cat0', 'cat1', 'cat2', 'cat3', 'cat4']);
    const items = await collect(source);
    assert.equal(items.length, 1, 'item "21" has no image in the dataset');
    assert.deepEqual(items[0].annotations, [
      { type: 'classification', className: 'cat2', attributes: { x: 1, y: '2' }, geometry: {} },
      { type: 'bbox', className: 'cat4', attributes: { score: 1 }, geometry: { x: 1, y: 2, width: 3, height: 4 } },
      // Three points on cat0, whose skeleton has two: a point set, not an instance.
      { type: 'points', className: 'cat0', attributes: { x: 1, y: '2' }, geometry: { points: [[1, 2], [2, 0], [1, 1]] } },
    ]);
    const mask = "a mask needs an rle whose size is the image's [height, width]";
    assert.deepEqual(skippedOf(source), [
      ['item "100" annotation 1 (caption)', "Versa has no shape for Datumaro's caption"],
      ['item "100" annotation 2 (caption)', "Versa has no shape for Datumaro's caption"],
      ['item "100" annotation 5 (bbox)', 'the annotation has no label'],
      ['item "100" annotation 5 (mask)', mask],
      ['item "21" annotation 0 (caption)', "Versa has no shape for Datumaro's caption"],
      ['item "21" annotation 42 (bbox)', 'label_id 5 is not in the label categories'],
      ['image "21.jpg" (annotations/train.json item "21")', 'the labels name this image but its file is not in the dataset'],
      ['label 1 of "21.jpg" (annotations/train.json item "21") (classification, class "cat2")', 'its image is not in the dataset'],
    ]);
    // Read twice, accounted once.
    await collect(source);
    assert.equal(source.ledger!.skippedCount, 8);
  });

  it('written back, a skeleton is a Datumaro skeleton (triples, sublabels after the classes) and reads back the same', async () => {
    const source = await readDatumaro(join(FIXTURES, 'datumaro-real/with_skeleton'));
    const items = await collect(source);
    const root = await writeToFolder(writeDatumaro, { classes: source.classes, classSpecs: source.classSpecs, items });
    const doc = JSON.parse(await readFile(join(root, 'annotations/default.json'), 'utf8'));
    assert.deepEqual(doc.categories.label.labels.map((l: { name: string; parent: string }) => [l.name, l.parent]), [
      ['skeleton-label', ''], ['point1-label', 'skeleton-label'], ['point3-label', 'skeleton-label'], ['point2-label', 'skeleton-label'],
    ]);
    assert.deepEqual(doc.categories.points.items, [{ label_id: 0, labels: ['point1-label', 'point3-label', 'point2-label'], joints: [[2, 3], [1, 2]] }]);
    const [written] = doc.items[0].annotations;
    assert.deepEqual([written.type, written.label_id, written.points], ['skeleton', 0, [0.9, 3.53, 2, 2.45, 7.6, 2, 5.2, 2.5, 2]]);
    const back = await readDatumaro(root);
    assert.deepEqual(back.classes, source.classes);
    assert.deepEqual((await collect(back))[0].annotations, items[0].annotations);
  });
});

describe('shapes-real-exports: Label Studio', () => {
  it("25 rotated rectangles of a real export: each box's top-left corner, turned by its angle about Versa's centre, is where Label Studio put it", async () => {
    const root = join(FIXTURES, 'labelstudio-real/obb');
    const tasks = JSON.parse(await readFile(join(root, 'export.json'), 'utf8')) as { annotations: { result: { original_width: number; original_height: number; value: Record<string, number> }[] }[] }[];
    const source = await readLabelStudio(root);
    assert.deepEqual(source.classes, ['Butterfly', 'butterfly']);
    assert.equal(source.projectType, 'object_detection');
    const items = await collect(source);
    assert.deepEqual(items.map((i) => [i.fileName, i.annotations.length]), [['image1.jpg', 23], ['image2.jpg', 1], ['image3.jpg', 1]]);
    items.forEach((item, t) => item.annotations.forEach((a, k) => {
      const r = tasks[t].annotations[0].result[k];
      const [sx, sy] = [r.original_width / 100, r.original_height / 100];
      assert.equal(a.type, 'bbox');
      const g = (a as Annotation & { type: 'bbox' }).geometry;
      const rad = (g.rotation! * Math.PI) / 180;
      const [cx, cy] = [g.x + g.width / 2, g.y + g.height / 2];
      const corner = [cx - (g.width / 2) * Math.cos(rad) + (g.height / 2) * Math.sin(rad), cy - (g.width / 2) * Math.sin(rad) - (g.height / 2) * Math.cos(rad)];
      assertClose([...corner, g.width, g.height, g.rotation], [r.value.x * sx, r.value.y * sy, r.value.width * sx, r.value.height * sy, r.value.rotation], `task ${t} result ${k}`);
    }));
    assert.equal(source.ledger!.skippedCount, 0);
  });

  it('a video task with a videorectangle track is listed (the task and its track), not dropped and not a failed import', async () => {
    const source = await readLabelStudio(join(FIXTURES, 'labelstudio-real/video'));
    assert.deepEqual(await collect(source), []);
    assert.deepEqual(skippedOf(source), [
      ['task 28 result M-XUImr4kg (videorectangle) "Possum"', 'a video track (6 keyframes): Versa does not import video tracks yet'],
      ['image (none) of task 28', "the task's data names no image (video); Versa imports images"],
    ]);
    assert.deepEqual(source.ledger!.counts().skipped, { images: 1, annotations: {}, attributes: 0, tracks: 1 });
  });
});

describe('shapes-real-exports: Label Studio editor examples', () => {
  it("an ellipse, an image-level choice and keypoints as Label Studio's editor saves them: geometry in pixels of the image", async () => {
    const source = await readLabelStudio(join(FIXTURES, 'labelstudio-real/regions'));
    const items = await collect(source);
    assert.deepEqual(items.map((i) => [i.fileName, i.width, i.height]), [['nick-owuor-astro-nic-visuals-wDifg5xc9Z4-unsplash.jpg', 224, 280], ['spacexmoon-800x501.jpg', 200, 125]]);
    const [planet, space] = items[0].annotations;
    assert.deepEqual([planet.type, planet.className, space.type, space.className], ['ellipse', 'Planet', 'classification', 'Space']);
    assertClose(planet.geometry, { cx: 0.504 * 224, cy: 0.50763073639274279 * 280, rx: 0.13333333333333334 * 224, ry: 0.10672358591248665 * 280, rotation: 0 });
    // Two labels, no parent region: one point set per label.
    assert.deepEqual(items[1].annotations.map((a) => [a.type, a.className]), [['points', 'Hello'], ['points', 'World']]);
    assertClose(items[1].annotations.map((a) => a.geometry), [{ points: [[0.496 * 200, 0.52340425531914896 * 125]] }, { points: [[0.47733333333333334 * 200, 0.52765957446808514 * 125]] }]);
    assert.equal(source.ledger!.skippedCount, 0);
  });
});

describe('shapes-real-exports: Label Studio brush', () => {
  it("label-studio-converter's own RLE vector decodes to its pixels with the decoder the reader uses", () => {
    // tests/test_brush.py (HumanSignal/label-studio-converter 2ef54005): encode_rle of these colour values.
    const values = [1, 1, 1, 1, 2, 3, 5, 6, 7, 8, 4, 4, 4, 4, 4, 4, 4, 4];
    const rle = [0, 0, 0, 18, 57, 27, 252, 96, 32, 1, 0, 6, 0, 40, 0, 192, 3, 128, 17, 56, 32];
    assert.deepEqual([...decodeRlePack(Uint8Array.from(rle))], values);
  });
});
