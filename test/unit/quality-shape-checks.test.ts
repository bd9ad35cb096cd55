/** The shape checks on cases the annotations API refuses but other paths may store (an older skeleton, a moved class, a broken import). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATION_TYPES } from '../../src/imaging/geometry.js';
import { Findings } from '../../src/modules/quality/check-catalog.logic.js';
import { AnnotationColumns, DatasetSnapshot, shapeNote } from '../../src/modules/quality/dataset-snapshot.logic.js';
import type { MeasuredImageRow } from '../../src/modules/quality/image-features.repository.js';
import { SHAPE_CHECKS } from '../../src/modules/quality/shape-checks.logic.js';

const type = (name: string) => ANNOTATION_TYPES.indexOf(name as (typeof ANNOTATION_TYPES)[number]);

function run(id: string, rows: [number, string, object][], skeletons = new Map<number, string[]>()): Findings {
  const a = new AnnotationColumns(rows.length);
  rows.forEach(([classId, name, g], k) => a.push([k + 1, 1, classId, type(name), null, null, null, null, JSON.stringify(g)], 0));
  const image = { id: 1, width: 100, height: 100, split: null } as unknown as MeasuredImageRow;
  const snapshot = new DatasetSnapshot(1, [image], a, new Map([[1, 'person'], [2, 'hand']]), skeletons);
  const findings = new Findings();
  SHAPE_CHECKS.find((c) => c.id === id)!.run(snapshot, {}, findings);
  return findings;
}

describe('shape checks', () => {
  it('a keypoint instance with more or fewer points than its class skeleton is an error', () => {
    const skeleton = new Map([[1, ['a', 'b', 'c']]]);
    const found = run('skeleton_mismatch', [
      [1, 'keypoints', { points: [[1, 1, 2], [2, 2, 2]] }],
      [1, 'keypoints', { points: [[1, 1, 2], [2, 2, 2], [3, 3, 2]] }],
    ], skeleton);
    assert.equal(found.count, 1);
    assert.deepEqual(found.items().map((i) => [i.annotation_id, i.detail]), [[1, "2 points; person's skeleton has 3: redraw the instance from the template or move it to its class"]]);
  });

  it('a box or an ellipse centred off the image is collapsed; one centred on it is not', () => {
    const found = run('collapsed_shapes', [
      [1, 'bbox', { x: 90, y: 90, width: 40, height: 40, rotation: 45 }],
      [1, 'ellipse', { cx: -5, cy: 50, rx: 10, ry: 10, rotation: 0 }],
      [1, 'bbox', { x: 70, y: 70, width: 40, height: 40, rotation: 45 }],
    ]);
    assert.deepEqual(found.items().map((i) => i.annotation_id), [1, 2]);
    assert.match(found.items()[0].detail, /Box centred off the 100×100 image/);
  });

  it('notes only what a check reports: a clean shape has no note', () => {
    assert.equal(shapeNote('keypoints', { points: [[1, 1, 2]], bbox: { x: 0, y: 0, width: 2, height: 2 } }), null);
    assert.equal(shapeNote('bbox', { x: 0, y: 0, width: 0.5, height: 9 }), null, 'an axis-aligned box is measured by degenerate_annotations');
    assert.deepEqual(shapeNote('polyline', { points: [[1, 1], [1, 1], [1, 1]] }), { distinct: 1 });
    // A hole drawn along its part's edge is inside; one across another part of the object too.
    const parts = [[[0, 0], [10, 0], [10, 10], [0, 10]], [[20, 0], [30, 0], [30, 10]]];
    assert.equal(shapeNote('polygon', { points: parts[0], parts, holes: [[[0, 0], [5, 0], [5, 5]], [[25, 1], [29, 1], [29, 5]]] }), null);
    assert.deepEqual(shapeNote('polygon', { points: parts[0], parts, holes: [[[5, 5], [15, 5], [15, 8]]] }), { strayHoles: [0] });
  });
});
