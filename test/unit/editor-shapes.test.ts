import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attributesFromText, attributesToText, skeletonFromText, skeletonToText } from '../../web/src/components/class-specs-text.js';
import { boundsOf, handlePoints, hits, rotatedCorners, translate, BOX_ROTATE_HANDLE, ELLIPSE_HANDLES } from '../../web/src/editor/geometry.js';
import { dragHandle } from '../../web/src/editor/tools/handle-drag.js';
import type { Annotation } from '../../web/src/types.js';

// The editor's geometry for the shapes of issue 25: rotated boxes (CVAT convention: x, y, w, h before rotation,
// degrees clockwise about the centre), ellipses, polygon parts, skeletons; and the classes panel's spec text.

const ann = (annotation_type: Annotation['annotation_type'], geometry: object): Annotation =>
  ({ id: 1, image_id: 1, class_id: 1, annotation_type, geometry, confidence: null, source: 'manual' }) as Annotation;
const close = (got: number[], want: number[], eps = 0.05) => got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= eps, `${got} vs ${want}`));

describe('editor geometry of the new shapes', () => {
  it('a box turned 90° has its corners, envelope and hit area turned about its centre', () => {
    const g = { x: 0, y: 40, width: 100, height: 20, rotation: 90 };
    close(rotatedCorners(g).flat(), [60, 0, 60, 100, 40, 100, 40, 0]);
    const box = ann('bbox', g);
    const b = boundsOf(box)!;
    close([b.x, b.y, b.width, b.height], [40, 0, 20, 100]);
    assert.equal(hits(box, b, undefined, 50, 5, 0), true, 'inside the turned box');
    assert.equal(hits(box, b, undefined, 5, 50, 0), false, 'inside the box before rotation only');
  });

  it('the rotation handle sets the angle from the centre; a resize of a turned box keeps the opposite side in place', () => {
    const g = { x: 0, y: 40, width: 100, height: 20 };
    const turned = dragHandle('bbox', g, BOX_ROTATE_HANDLE, 150, 50, 1000, 1000) as typeof g & { rotation: number };
    assert.equal(turned.rotation, 90, 'dragged to the right of the centre: 90° clockwise');
    close(handlePoints(ann('bbox', turned), boundsOf(ann('bbox', turned))!, 1)[BOX_ROTATE_HANDLE], [50 + 10 + 24, 50]);
    // Handle 3 is the right side (before rotation); turned 90° it sits below the centre. Dragged 30 px further down.
    const stretched = dragHandle('bbox', turned, 3, 50, 130, 1000, 1000) as typeof turned;
    assert.equal(stretched.width, 130);
    const [tl] = rotatedCorners(turned), [tl2] = rotatedCorners(stretched);
    close(tl2, tl, 0.02);
  });

  it('an ellipse: radius handles in its own frame, rotation handle, envelope and hit', () => {
    const g = { cx: 100, cy: 100, rx: 40, ry: 10, rotation: 90 };
    const e = ann('ellipse', g);
    const b = boundsOf(e)!;
    close([b.x, b.y, b.width, b.height], [90, 60, 20, 80]);
    assert.equal(hits(e, b, undefined, 100, 135, 0), true);
    assert.equal(hits(e, b, undefined, 135, 100, 0), false);
    close(handlePoints(e, b, 1)[ELLIPSE_HANDLES.rx], [100, 140]);
    assert.deepEqual(dragHandle('ellipse', g, ELLIPSE_HANDLES.rx, 100, 150, 1000, 1000), { ...g, rx: 50 });
    assert.equal((dragHandle('ellipse', g, ELLIPSE_HANDLES.rotate, 100, 200, 1000, 1000) as typeof g).rotation, 180);
  });

  it('a polygon of two parts with a hole: handles over every part, a vertex of the second part dragged, the hole not inside', () => {
    const outer: [number, number][] = [[0, 0], [40, 0], [40, 40], [0, 40]];
    const second: [number, number][] = [[100, 0], [140, 0], [120, 30]];
    const g = { points: outer, parts: [outer, second], holes: [[[10, 10], [30, 10], [30, 30], [10, 30]] as [number, number][]] };
    const p = ann('polygon', g);
    const b = boundsOf(p)!;
    assert.equal(handlePoints(p, b).length, 7);
    assert.equal(hits(p, b, undefined, 5, 5, 0), true);
    assert.equal(hits(p, b, undefined, 20, 20, 0), false, 'in the hole');
    assert.equal(hits(p, b, undefined, 120, 10, 0), true, 'in the second part');
    const moved = dragHandle('polygon', g, 6, 125, 35, 1000, 1000) as typeof g;
    assert.deepEqual(moved.parts[1][2], [125, 35]);
    assert.deepEqual(moved.points, outer);
    assert.deepEqual(moved.holes, g.holes);
  });

  it('a skeleton: points not labelled stay [0, 0, 0] when it moves and are never grabbed; moves stay inside the image', () => {
    const g = { points: [[10, 10, 2], [0, 0, 0], [30, 20, 1]] as [number, number, number][] };
    const k = ann('keypoints', g);
    const b = boundsOf(k)!;
    close([b.x, b.y, b.width, b.height], [10, 10, 20, 10]);
    assert.ok(Number.isNaN(handlePoints(k, b)[1][0]));
    assert.deepEqual(translate(k, 100, 5, 50, 50), { points: [[30, 15, 2], [0, 0, 0], [50, 25, 1]] }, 'cut short at the border');
    assert.deepEqual((dragHandle('keypoints', g, 0, 12, 14, 50, 50) as typeof g).points[0], [12, 14, 2]);
  });

  it('a polyline is hit near its segments, not across its open end', () => {
    const l = ann('polyline', { points: [[0, 0], [100, 0], [100, 100]] });
    const b = boundsOf(l)!;
    assert.equal(hits(l, b, undefined, 50, 1, 1), true);
    assert.equal(hits(l, b, undefined, 50, 50, 1), false);
  });
});

describe('class specs as text (classes panel)', () => {
  it('a skeleton and attribute specs read from text and written back', () => {
    const skeleton = skeletonFromText('nose, left_eye,\nright_eye', 'nose-left_eye, nose-right_eye', 'left_eye-right_eye');
    assert.deepEqual(skeleton, { points: ['nose', 'left_eye', 'right_eye'], edges: [[0, 1], [0, 2]], flip_pairs: [[1, 2]] });
    assert.deepEqual(skeletonToText(skeleton), { points: 'nose, left_eye, right_eye', edges: 'nose-left_eye, nose-right_eye', flips: 'left_eye-right_eye' });
    assert.equal(skeletonFromText('', '', ''), null);
    assert.throws(() => skeletonFromText('a, b', 'a-c', ''), /Edge "a-c"/);
    const text = 'occluded: checkbox = true\npose: select standing | sitting = standing\nheight: number 0..300 5\nnote: text';
    const specs = attributesFromText(text);
    assert.deepEqual(specs, [
      { name: 'occluded', type: 'checkbox', default: true },
      { name: 'pose', type: 'select', values: ['standing', 'sitting'], default: 'standing' },
      { name: 'height', type: 'number', values: [0, 300, 5] },
      { name: 'note', type: 'text' },
    ]);
    assert.equal(attributesToText(specs), text);
    assert.throws(() => attributesFromText('size: big'), /checkbox\|select\|number\|text/);
  });
});
