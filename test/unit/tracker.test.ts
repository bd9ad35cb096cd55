import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assign, FORBIDDEN } from '../../src/lib/assignment.js';
import { keyframeIndices, lerpBox, type BoxAt } from '../../src/modules/tracks/track-keyframes.logic.js';
import { trackDetections, type Detection, type TrackResult } from '../../src/modules/tracks/tracker.logic.js';
import { boxIou } from '../../src/lib/mot-metrics.js';

const det = (x: number, y: number, score = 0.9, classKey: number | string = 0, size = 40): Detection => ({ x, y, width: size, height: size, score, classKey });
const frames = (count: number, at: (f: number) => Detection[]) => Array.from({ length: count }, (_, frame) => ({ frame, detections: at(frame) }));
const framesOf = (track: TrackResult) => track.observations.map((o) => o.frame);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('optimal assignment (issue 26)', () => {
  it('finds the least total cost where a greedy pick would not', () => {
    // Greedy takes (0,0)=1 first and is left with 100; the optimum pairs (0,1) and (1,0) for 4.
    assert.deepEqual(assign([[1, 2], [2, 100]]), [[0, 1], [1, 0]]);
    assert.deepEqual(assign([[4, 1, 3], [2, 0, 5], [3, 2, 2]]), [[0, 1], [1, 0], [2, 2]]);
  });

  it('handles more rows than columns, forbidden pairs and a cost limit', () => {
    assert.deepEqual(assign([[5], [1], [3]]), [[1, 0]]);
    assert.deepEqual(assign([[FORBIDDEN, 1], [FORBIDDEN, 2]]), [[0, 1]]);
    // With a limit, a pair costs no more than leaving both unmatched: 0.9 ≥ 0.8 is left out.
    assert.deepEqual(assign([[0.1, 0.9], [0.9, 0.9]], 0.8), [[0, 0]]);
    assert.deepEqual(assign([]), []);
  });
});

describe('ByteTrack-style tracker (issue 26)', () => {
  it('keeps identities of two objects that cross, where matching to the last position would swap them', () => {
    // A moves right and B left at 16 px a frame; between frames 9 and 10 they pass each other, and on frame 10 each
    // lies nearer the other's previous box than its own.
    const tracks = trackDetections(frames(20, (f) => [det(16 * f, 50), det(312 - 16 * f, 50)]));
    assert.equal(tracks.length, 2);
    const [a, b] = tracks;
    assert.deepEqual(framesOf(a), range(0, 19));
    assert.deepEqual(framesOf(b), range(0, 19));
    a.observations.forEach((o) => assert.equal(o.detected.x, 16 * o.frame, `track 1 follows A on frame ${o.frame}`));
    b.observations.forEach((o) => assert.equal(o.detected.x, 312 - 16 * o.frame, `track 2 follows B on frame ${o.frame}`));
    // Without the motion model each track takes the other object on frame 10.
    const still = trackDetections(frames(20, (f) => [det(16 * f, 50), det(312 - 16 * f, 50)]), { motion: false });
    assert.ok(still.some((t) => t.observations.some((o) => o.frame === 10 && o.detected.x !== (t.observations[0].detected.x === 0 ? 160 : 152))));
  });

  it('bridges a missed detection with a low-score one, and starts no track on low-score noise', () => {
    const tracks = trackDetections(frames(12, (f) => [det(10 + 5 * f, 50, f === 6 ? 0.3 : 0.9), det(300, 300, 0.3)]));
    assert.equal(tracks.length, 1, 'the steady low-score box far away starts nothing');
    assert.deepEqual(framesOf(tracks[0]), range(0, 11), 'frame 6 came from the second stage');
    assert.equal(tracks[0].observations[6].score, 0.3);
    // Without the second stage (nothing below 0.5 is looked at) frame 6 is a gap.
    const strict = trackDetections(frames(12, (f) => [det(10 + 5 * f, 50, f === 6 ? 0.3 : 0.9)]), { lowScore: 0.5 });
    assert.deepEqual(framesOf(strict[0]), [...range(0, 5), ...range(7, 11)]);
  });

  it('bridges a short occlusion by motion: the object comes back where its velocity puts it', () => {
    // 12 px a frame with a 40 px box: after four unseen frames it is 60 px from where it was last seen (no overlap).
    const tracks = trackDetections(frames(14, (f) => (f >= 5 && f <= 8 ? [] : [det(12 * f, 50)])));
    assert.equal(tracks.length, 1);
    assert.equal(tracks[0].id, 1);
    assert.deepEqual(framesOf(tracks[0]), [...range(0, 4), ...range(9, 13)]);
  });

  it('confirms a track only after consecutive matches, and ends one lost for too long', () => {
    const blips = trackDetections(frames(10, (f) => (f === 3 || f === 4 ? [det(200, 200)] : [])), { confirmHits: 3 });
    assert.deepEqual(blips, [], 'two frames of a false positive make no track');
    const born = trackDetections(frames(10, (f) => (f >= 3 ? [det(200, 200)] : [])), { confirmHits: 3 });
    assert.deepEqual(framesOf(born[0]), range(3, 9), 'the frames before confirmation belong to the track');
    // Still for 5 frames, gone for 6, back at the same place: with maxLostFrames 4 it is a new track.
    const back = (maxLostFrames: number) => trackDetections(frames(16, (f) => (f < 5 || f > 10 ? [det(100, 100)] : [])), { maxLostFrames });
    assert.equal(back(4).length, 2);
    assert.equal(back(30).length, 1);
  });

  it('links detections only within a class', () => {
    const tracks = trackDetections(frames(6, (f) => [det(50 + 2 * f, 50, 0.9, 'car'), det(52 + 2 * f, 50, 0.9, 'person')]));
    assert.equal(tracks.length, 2);
    assert.deepEqual(tracks.map((t) => t.classKey).sort(), ['car', 'person']);
    for (const t of tracks) assert.ok(t.observations.every((o) => o.detected.x === (t.classKey === 'car' ? 50 : 52) + 2 * o.frame));
  });

  it('follows motion on videos decoded at every Nth frame', () => {
    // 15 px per decoded frame (every 5th): across the missing frame 25 the box moves 30 px, and only motion finds it.
    const decoded = range(0, 8).map((i) => 5 * i);
    const tracks = trackDetections(decoded.map((frame) => ({ frame, detections: frame === 25 ? [] : [det(3 * frame, 50)] })));
    assert.equal(tracks.length, 1);
    assert.deepEqual(framesOf(tracks[0]), decoded.filter((f) => f !== 25));
  });
});

describe('keyframes from a tracked path (issue 26)', () => {
  const path = (count: number, at: (f: number) => number): BoxAt[] => range(0, count - 1).map((frame) => ({ frame, box: { x: at(frame), y: 10, width: 40, height: 40 } }));

  it('keeps the two ends of a straight path and the corner of a bent one', () => {
    assert.deepEqual(keyframeIndices(path(30, (f) => 3 * f)), [0, 29]);
    const bent = path(21, (f) => (f <= 10 ? 4 * f : 40 - 4 * (f - 10)));
    const kept = keyframeIndices(bent);
    assert.deepEqual(kept, [0, 10, 20]);
  });

  it('keeps every left-out box within the IoU asked for', () => {
    const wobbly = path(40, (f) => 2 * f + 6 * Math.sin(f / 3));
    const kept = keyframeIndices(wobbly, 0.9);
    assert.ok(kept.length > 2 && kept.length < 40);
    for (let k = 0; k + 1 < kept.length; k++) {
      const [a, b] = [wobbly[kept[k]], wobbly[kept[k + 1]]];
      for (let i = kept[k] + 1; i < kept[k + 1]; i++) {
        assert.ok(boxIou(lerpBox(a.box, b.box, (wobbly[i].frame - a.frame) / (b.frame - a.frame)), wobbly[i].box) >= 0.9);
      }
    }
  });
});
