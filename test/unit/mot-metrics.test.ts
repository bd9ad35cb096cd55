import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { motMetrics, type MotBox } from '../../src/lib/mot-metrics.js';

const box = (frame: number, id: number | string, x: number, y = 0, size = 10): MotBox => ({ frame, id, x, y, width: size, height: size });

describe('MOT metrics (issue 26)', () => {
  it('scores a perfect tracking 1 whatever the hypothesis ids are', () => {
    const gt = [box(1, 1, 0), box(1, 2, 50), box(2, 1, 2), box(2, 2, 52)];
    const hyp = [box(1, 'a', 0), box(1, 'b', 50), box(2, 'a', 2), box(2, 'b', 52)];
    const m = motMetrics(gt, hyp);
    assert.deepEqual([m.mota, m.idf1, m.idSwitches, m.falsePositives, m.misses, m.matches, m.motp], [1, 1, 0, 0, 0, 4, 1]);
  });

  it('counts an identity switch: MOTA loses 1 of 4, IDF1 keeps the longer half', () => {
    const gt = [1, 2, 3, 4].map((f) => box(f, 1, 0));
    const hyp = [box(1, 'a', 0), box(2, 'a', 0), box(3, 'b', 0), box(4, 'b', 0)];
    const m = motMetrics(gt, hyp);
    assert.equal(m.idSwitches, 1);
    assert.equal(m.mota, 0.75);
    // One identity pair at most: IDTP = 2 of 4 ground-truth and 4 hypothesis boxes.
    assert.equal(m.idf1, 0.5);
    assert.deepEqual([m.idp, m.idr], [0.5, 0.5]);
  });

  it('counts misses and false positives, with IoU 0.5 as the bar', () => {
    const gt = [box(1, 1, 0), box(1, 2, 100), box(2, 1, 0), box(2, 2, 100)];
    // Frame 2 misses object 2 and has a box far away; object 1 on frame 2 is matched at IoU 0.54 (x shifted by 3).
    const hyp = [box(1, 'a', 0), box(1, 'b', 100), box(2, 'a', 3), box(2, 'c', 500)];
    const m = motMetrics(gt, hyp);
    assert.deepEqual([m.misses, m.falsePositives, m.idSwitches, m.matches], [1, 1, 0, 3]);
    assert.equal(m.mota, 0.5);
    assert.equal(m.idf1, (2 * 3) / (4 + 4));
    const below = motMetrics(gt.slice(0, 1), [box(1, 'a', 3.5)]);
    assert.deepEqual([below.misses, below.falsePositives], [1, 1], 'IoU 0.48 is no match');
  });

  it('keeps a match over frames rather than re-pairing to a closer hypothesis (no switch)', () => {
    // Object 1 is matched to 'a' on frame 1; on frame 2 'b' overlaps it better, but 'a' still overlaps enough.
    const gt = [box(1, 1, 0), box(2, 1, 0)];
    const hyp = [box(1, 'a', 0), box(2, 'a', 2), box(2, 'b', 0)];
    const m = motMetrics(gt, hyp);
    assert.deepEqual([m.idSwitches, m.falsePositives, m.misses], [0, 1, 0]);
  });

  it('matches only within a class when classes are given', () => {
    const m = motMetrics([{ ...box(1, 1, 0), classKey: 'car' }], [{ ...box(1, 'a', 0), classKey: 'person' }]);
    assert.deepEqual([m.misses, m.falsePositives, m.mota], [1, 1, -1]);
  });
});
