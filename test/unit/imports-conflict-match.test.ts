import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchedAnnotations, sameGeometry } from '../../src/modules/imports/annotation-match.logic.js';

const row = (id: number, class_id: number, annotation_type: string, geometry: object) => ({ id, image_id: 1, class_id, annotation_type, geometry: JSON.stringify(geometry) });

describe('imports-conflict matching of annotations', () => {
  it('imports-conflict geometry within 0.5 px is the same, beyond is not; structure must agree', () => {
    assert.ok(sameGeometry({ x: 1, y: 2, width: 3, height: 4 }, { x: 1.4, y: 2, width: 3, height: 3.6 }));
    assert.ok(!sameGeometry({ x: 1, y: 2, width: 3, height: 4 }, { x: 1.6, y: 2, width: 3, height: 4 }));
    assert.ok(sameGeometry({ points: [[0, 0], [5, 5], [0, 5]] }, { points: [[0.2, 0], [5, 5], [0, 5.3]] }));
    assert.ok(!sameGeometry({ points: [[0, 0], [5, 5], [0, 5]] }, { points: [[0, 0], [5, 5], [0, 5], [1, 1]] }));
    assert.ok(!sameGeometry({ points: [[1, 1, 2]] }, { points: [[1, 1, 1]] }), 'keypoint visibility differs');
  });

  it('imports-conflict rotation: absent equals 0, and 359.8° equals 0.1°', () => {
    assert.ok(sameGeometry({ x: 1, y: 1, width: 2, height: 2 }, { x: 1, y: 1, width: 2, height: 2, rotation: 0 }));
    assert.ok(sameGeometry({ x: 1, y: 1, width: 2, height: 2, rotation: 359.8 }, { x: 1, y: 1, width: 2, height: 2, rotation: 0.1 }));
    assert.ok(!sameGeometry({ x: 1, y: 1, width: 2, height: 2, rotation: 30 }, { x: 1, y: 1, width: 2, height: 2 }));
  });

  it('imports-conflict each existing annotation matches once, and only one of the same class and type', () => {
    const box = { x: 0, y: 0, width: 10, height: 10 };
    const existing = [row(1, 7, 'bbox', box)];
    const incoming = [row(10, 7, 'bbox', box), row(11, 7, 'bbox', box), row(12, 8, 'bbox', box), row(13, 7, 'polygon', { points: [[0, 0], [10, 0], [10, 10]] })];
    assert.deepEqual([...matchedAnnotations(incoming, existing)], [10]);
  });
});
