import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { framesSave, shapesOnFrame, taskTracks, type FrameShapes } from '../../src/modules/quality-control/task-tracks.logic.js';

const box = (x: number) => ({ x, y: 0, width: 10, height: 10 });
const key = (class_id: number, x: number, track_id = 1) => ({ class_id, annotation_type: 'bbox' as const, geometry: box(x), track_id, keyframe: true });
const plain = { class_id: 3, annotation_type: 'bbox' as const, geometry: box(100) };

/** An annotator's task tracks on a video's frames (issues 26, 29): stored keyframes in, each frame's shapes out. */
describe('task tracks', () => {
  const frames: FrameShapes[] = [
    { frame: 0, shapes: [plain, key(1, 0)] },
    { frame: 10, shapes: [key(2, 20)] },
  ];

  it('shows plain shapes, keyframes, and interpolated shapes in the class of the keyframe before them', () => {
    const tracks = taskTracks(frames);
    assert.deepEqual(shapesOnFrame(tracks, frames[0].shapes, 0), [plain, key(1, 0)]);
    assert.deepEqual(shapesOnFrame(tracks, [], 5), [{ ...key(1, 10), keyframe: false }]);
    assert.deepEqual(shapesOnFrame(tracks, [], 15), [{ ...key(2, 20), keyframe: false }], 'held after the last keyframe, in its class');
  });

  it('saves keyframes as sent, leaves interpolated shapes out, hides a track the save leaves out', () => {
    assert.deepEqual(framesSave(frames, 5, [{ ...key(1, 10), keyframe: false }]), [], 'the frame as read stores nothing');
    assert.deepEqual(framesSave(frames, 5, [{ class_id: 1, annotation_type: 'bbox', geometry: box(12), track_id: 1 }]), [key(1, 12)], 'a track shape is a keyframe by default');
    assert.deepEqual(framesSave(frames, 5, []), [{ ...key(1, 10), outside: true }]);
    const hidden: FrameShapes[] = [...frames, { frame: 12, shapes: [{ ...key(2, 20), outside: true }] }];
    assert.deepEqual(shapesOnFrame(taskTracks(hidden), [], 13), [], 'hidden after the outside keyframe');
    assert.deepEqual(framesSave(hidden, 13, []), [], 'nothing to hide where the track is not shown');
    assert.deepEqual(framesSave(frames, 5, [key(1, 1, 4), key(1, 2, 4)]), { duplicate: 1 });
  });
});
