import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Annotation } from '../../src/formats/dataset.js';
import { readDataset } from '../../src/formats/readers/index.js';
import { writeCocoZip } from '../../src/formats/writers/coco-writer.js';
import { writeUltralytics } from '../../src/formats/writers/ultralytics-writer.js';
import { rotatedCorners, type Point } from '../../src/imaging/geometry.js';
import { assertClose, collect, writeToFolder } from '../helpers/shapes-roundtrip.js';

/** Real exports copied from public repositories (see each folder's SOURCE.md). */
const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

type Box = Annotation & { type: 'bbox' };

/** The label lines of a YOLO OBB folder as pixel corners (the stand-in images are 640×640, as Roboflow resized them). */
async function obbLines(root: string, size: number): Promise<Map<string, { cls: number; corners: Point[] }[]>> {
  const byImage = new Map<string, { cls: number; corners: Point[] }[]>();
  for (const split of ['train', 'test']) {
    for (const file of await readdir(join(root, split, 'labels'))) {
      const text = await readFile(join(root, split, 'labels', file), 'utf8');
      byImage.set(file.replace(/\.txt$/, '.jpg'), text.trim().split('\n').map((line) => {
        const [cls, ...xy] = line.trim().split(/\s+/).map(Number);
        return { cls, corners: [0, 2, 4, 6].map((i) => [xy[i] * size, xy[i + 1] * size] as Point) };
      }));
    }
  }
  return byImage;
}

const length = ([ax, ay]: Point, [bx, by]: Point) => Math.hypot(bx - ax, by - ay);
/** An edge's direction in degrees, modulo 180 (a box turned by 180° is the same box). */
const direction = ([ax, ay]: Point, [bx, by]: Point) => (((Math.atan2(by - ay, bx - ax) * 180) / Math.PI) % 180 + 180) % 180;

describe('shapes-real-exports-2: YOLO OBB (Roboflow "YOLOv8 Oriented Object Detection" export)', () => {
  const root = join(FIXTURES, 'idcards-yolo-obb');

  it("every label line is a rotated box whose corners, size and angle are the line's four corners", async () => {
    const source = await readDataset(root);
    assert.equal(source.format, 'yolo');
    assert.equal(source.projectType, 'oriented_detection');
    assert.deepEqual(source.classes, ['Expiration', 'Name', 'University']);
    const items = await collect(source);
    assert.deepEqual(items.map((i) => [i.split, i.fileName, i.width, i.height, i.annotations.length]).sort(), [
      ['test', 's57_jpg.rf.86330af6ba9ccbfdfbaf0bc4775951b7.jpg', 640, 640, 3],
      ['test', 's92_jpg.rf.b2caf235c1b80390a5ff979c296c7afb.jpg', 640, 640, 3],
      ['train', '1574672612907_jpeg.rf.16baebdae02491f388390f280c620f04.jpg', 640, 640, 2],
      ['train', 'Oxford-student-id-card_jpg.rf.72102f77f18fa366fc24bf5d0f3391ec.jpg', 640, 640, 2],
    ]);
    const lines = await obbLines(root, 640);
    for (const item of items) {
      const expected = lines.get(item.fileName)!;
      assert.equal(item.annotations.length, expected.length);
      item.annotations.forEach((a, k) => {
        const where = `${item.fileName} line ${k + 1}`;
        const { cls, corners } = expected[k];
        assert.equal(a.type, 'bbox', where);
        assert.equal(a.className, source.classes[cls], where);
        const g = (a as Box).geometry;
        // Each corner of the line is a corner of the box (order aside), within half a pixel.
        const got = rotatedCorners(g);
        for (const c of corners) assert.ok(got.some((p) => length(p, c) <= 0.5), `${where}: corner ${c} not in ${JSON.stringify(got)}`);
        // Its sides are the line's: width along one edge, height along the next, the angle that edge's direction.
        const [e1, e2] = [length(corners[0], corners[1]), length(corners[1], corners[2])];
        const widthEdge = Math.abs(g.width - e1) <= 0.5 ? [corners[0], corners[1]] : [corners[1], corners[2]];
        assertClose([g.width, g.height].sort((x, y) => x - y), [e1, e2].sort((x, y) => x - y), `${where} size`);
        assertClose(((g.rotation ?? 0) % 180 + 180) % 180, direction(widthEdge[0], widthEdge[1]), `${where} rotation`);
      });
    }
    assert.deepEqual(source.ledger!.skippedList, []);
  });

  it('written as Ultralytics OBB and read back: the same boxes, within half a pixel and half a degree', async () => {
    const source = await readDataset(root);
    const items = await collect(source);
    const out = await writeToFolder(writeUltralytics, { classes: source.classes, classSpecs: source.classSpecs, projectType: source.projectType, items });
    const back = await readDataset(out);
    assert.equal(back.projectType, 'oriented_detection');
    assert.deepEqual(back.classes, source.classes);
    const again = new Map((await collect(back)).map((i) => [i.fileName, i]));
    assert.equal(again.size, items.length);
    for (const item of items) {
      const other = again.get(item.fileName)!;
      assert.equal(other.split, item.split);
      assert.deepEqual(other.annotations.map((a) => a.className), item.annotations.map((a) => a.className));
      other.annotations.forEach((a, k) => assertClose(a.geometry, item.annotations[k].geometry, `${item.fileName} box ${k}`));
    }
    assert.equal(back.ledger!.skippedCount, 0);
  });
});

describe('shapes-real-exports-2: COCO keypoints (person_keypoints of COCO val2017, as mmpose keeps them)', () => {
  const root = join(FIXTURES, 'coco-keypoints-mmpose');
  type CocoDoc = {
    categories: { name: string; keypoints: string[]; skeleton: [number, number][] }[];
    images: { id: number; file_name: string; width: number; height: number }[];
    annotations: { image_id: number; keypoints: number[]; num_keypoints: number; segmentation: number[][]; bbox: number[] }[];
  };
  const byType = (annotations: Annotation[]) => annotations.reduce<Record<string, number>>((n, a) => ({ ...n, [a.type]: (n[a.type] ?? 0) + 1 }), {});

  it("each person with keypoints is one 17-point instance (the category's names, its 1-based skeleton, left/right pairs) with its box; its outline a polygon", async () => {
    const doc = JSON.parse(await readFile(join(root, 'test_coco.json'), 'utf8')) as CocoDoc;
    const source = await readDataset(root);
    assert.equal(source.format, 'coco');
    assert.equal(source.projectType, 'keypoint_detection');
    assert.deepEqual(source.classes, ['person']);
    const [category] = doc.categories;
    const skeleton = source.classSpecs?.get('person')?.skeleton;
    assert.deepEqual(skeleton?.points, category.keypoints);
    assert.deepEqual(skeleton?.edges, category.skeleton.map(([a, b]) => [a - 1, b - 1]));
    // COCO has no flip list: the pairs come from the left_/right_ names.
    assert.deepEqual(skeleton?.flip_pairs, [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12], [13, 14], [15, 16]]);
    const items = await collect(source);
    assert.deepEqual(items.map((i) => [i.fileName, i.width, i.height]), doc.images.map((i) => [i.file_name, i.width, i.height]));
    // 14 people: 12 with keypoints (an instance and an outline each), 2 with none at all (their outline only).
    assert.deepEqual(byType(items.flatMap((i) => i.annotations)), { keypoints: 12, polygon: 14 });
    for (const [n, image] of doc.images.entries()) {
      const expected = doc.annotations.filter((a) => a.image_id === image.id && a.num_keypoints > 0);
      const got = items[n].annotations.filter((a) => a.type === 'keypoints');
      assert.equal(got.length, expected.length, image.file_name);
      got.forEach((a, k) => {
        const { keypoints, num_keypoints, bbox } = expected[k];
        const g = a.geometry as { points: number[][]; bbox: { x: number; y: number; width: number; height: number } };
        assert.equal(g.points.length, category.keypoints.length);
        assert.deepEqual(g.points, category.keypoints.map((_, i) => keypoints.slice(i * 3, i * 3 + 3)));
        assert.equal(g.points.filter((p) => p[2] > 0).length, num_keypoints, `${image.file_name} person ${k}: num_keypoints`);
        assert.deepEqual([g.bbox.x, g.bbox.y, g.bbox.width, g.bbox.height], bbox);
      });
    }
    assert.deepEqual(source.ledger!.skippedList, []);
  });

  it('written as COCO and read back: the same instances, skeleton and outlines, within half a pixel', async () => {
    const source = await readDataset(root);
    const items = await collect(source);
    const out = await writeToFolder(writeCocoZip, { classes: source.classes, classSpecs: source.classSpecs, projectType: source.projectType, items });
    const back = await readDataset(out);
    assert.equal(back.projectType, 'keypoint_detection');
    assert.deepEqual(back.classSpecs?.get('person')?.skeleton, source.classSpecs?.get('person')?.skeleton);
    const again = new Map((await collect(back)).map((i) => [i.fileName, i]));
    for (const item of items) {
      const other = again.get(item.fileName)!;
      assert.deepEqual(other.annotations.map((a) => a.type), item.annotations.map((a) => a.type), item.fileName);
      other.annotations.forEach((a, k) => assertClose(a.geometry, item.annotations[k].geometry, `${item.fileName} annotation ${k}`));
    }
    assert.equal(back.ledger!.skippedCount, 0);
  });
});
