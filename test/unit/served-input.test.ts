import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PreprocessingInput } from '../../src/imaging/recipe/index.js';
import type { Box } from '../../src/imaging/rle.js';
import { ImageClassifier } from '../../src/inference/classifier.js';
import { encodeOnnxMetadata, readOnnxMetadata } from '../../src/inference/onnx-metadata.js';
import { PREPROCESSING_METADATA_KEY, servedPreprocessing } from '../../src/inference/served-input.js';
import { SessionPool } from '../../src/inference/session-pool.js';
import { YoloDetector } from '../../src/inference/yolo-detector.js';
import { exifRotatedJpeg, squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloModel, buildYoloPoseModel } from '../helpers/onnx/yolo-models.js';
import { OnnxGraph } from '../helpers/onnx/onnx-graph.js';

/**
 * A model serves what it was trained on: the version preprocessing recorded in its metadata is applied to an original
 * image before the model's letterbox, and its boxes come back in the original's pixels. The test detector reports the
 * extent of red (class 0) and green (class 1) pixels, so what it finds shows which pixels it was given.
 */
const RED: Square = { x: 20, y: 30, width: 40, height: 50, colour: [255, 0, 0] };
const GREEN: Square = { x: 180, y: 40, width: 50, height: 60, colour: [0, 220, 0] };
const WIDTH = 256;
const HEIGHT = 128;

const withPreprocessing = (model: Uint8Array, pre: PreprocessingInput) =>
  new Uint8Array([...model, ...encodeOnnxMetadata({ [PREPROCESSING_METADATA_KEY]: JSON.stringify(pre) })]);

function assertBox(actual: Box, expected: Square, tolerance = 3): void {
  for (const key of ['x', 'y', 'width', 'height'] as const) {
    assert.ok(Math.abs(actual[key] - expected[key]) <= tolerance, `${key}: ${actual[key]} vs ${expected[key]} (${JSON.stringify(actual)})`);
  }
}

describe('models served with their training preprocessing', () => {
  let pool: SessionPool;
  let image: Buffer;
  let n = 0;
  const detector = (pre?: PreprocessingInput) => {
    const model = buildYoloModel('v8', { width: 128, height: 128 });
    return YoloDetector.load(pool, `served-${n++}`, pre ? withPreprocessing(model, pre) : model);
  };
  const detect = async (pre?: PreprocessingInput, bytes = image) =>
    (await (await detector(pre)).detect(bytes, { confidence: 0.25, iou: 0.45 })).detections;

  before(async () => {
    pool = new SessionPool({ intraOpThreads: 1 });
    image = await squaresPng(WIDTH, HEIGHT, [RED, GREEN]);
  });
  after(() => pool.close());

  it('writes and reads the metadata entry; a record that changes nothing or is invalid is no preprocessing', () => {
    const pre = { resize: { enabled: true, width: 64, height: 64, mode: 'stretch' as const } };
    const bytes = withPreprocessing(buildYoloModel('v8'), pre);
    const metadata = readOnnxMetadata(bytes);
    assert.deepEqual(JSON.parse(metadata[PREPROCESSING_METADATA_KEY]), pre);
    assert.equal(servedPreprocessing(metadata)?.resize.width, 64);
    assert.equal(servedPreprocessing({ [PREPROCESSING_METADATA_KEY]: JSON.stringify({ resize: { enabled: false } }) }), null);
    assert.equal(servedPreprocessing({ [PREPROCESSING_METADATA_KEY]: '{"resize": {"mode": "sideways"}}' }), null);
    assert.equal(servedPreprocessing({ [PREPROCESSING_METADATA_KEY]: 'not json' }), null);
  });

  it('stretches as the version did and maps boxes back to the original', async () => {
    const found = await detect({ resize: { enabled: true, width: 128, height: 128, mode: 'stretch' } });
    assert.deepEqual(found.map((d) => d.classId).sort(), [0, 1]);
    assertBox(found.find((d) => d.classId === 0)!.box, RED);
    assertBox(found.find((d) => d.classId === 1)!.box, GREEN);
  });

  it('applies a static crop: what the version cut away is not seen', async () => {
    const found = await detect({ static_crop: { enabled: true, x_min: 0, x_max: 50, y_min: 0, y_max: 100 }, resize: { enabled: true, width: 128, height: 128, mode: 'stretch' } });
    assert.deepEqual(found.map((d) => d.classId), [0]);
    assertBox(found[0].box, RED);
    // Without the record, the whole image is letterboxed and both squares are found.
    assert.equal((await detect()).length, 2);
  });

  it('runs each tile and gathers the boxes in the original', async () => {
    const found = await detect({ tile: { enabled: true, rows: 1, columns: 2 }, resize: { enabled: true, width: 128, height: 128, mode: 'stretch' } });
    assert.deepEqual(found.map((d) => d.classId).sort(), [0, 1]);
    assertBox(found.find((d) => d.classId === 0)!.box, RED);
    assertBox(found.find((d) => d.classId === 1)!.box, GREEN);
  });

  it("leaves a pose keypoint beyond the served crop where the model put it, not on the crop's edge", async () => {
    // The crop keeps y ≥ 32, stretched by 4/3: the model's `above` point, 40 input pixels over the red pixels' top (the
    // crop's edge), is 30 original pixels above it, on the image but off the crop.
    const pre = { static_crop: { enabled: true, x_min: 0, x_max: 100, y_min: 25, y_max: 100 }, resize: { enabled: true, width: 128, height: 128, mode: 'stretch' as const } };
    const pose = await YoloDetector.load(pool, `served-${n++}`, withPreprocessing(buildYoloPoseModel(), pre), undefined, 'pose');
    const [found] = (await pose.detect(image, { confidence: 0.25, iou: 0.45 })).detections;
    const [x, y] = found.keypoints![3];
    assert.ok(Math.abs(x - (RED.x + RED.width / 2)) <= 2 && Math.abs(y - 2) <= 2, JSON.stringify(found.keypoints));
  });

  it('converts to grey as the version did: colours the model never saw are not found', async () => {
    assert.equal((await detect({ grayscale: true, resize: { enabled: false } })).length, 0);
  });

  it('keeps the stored pixel order when the version did not orient, and answers in upright pixels', async () => {
    const rotated = await exifRotatedJpeg(WIDTH, HEIGHT, [RED, GREEN]);
    const upright = await detect({ auto_orient: true, resize: { enabled: true, width: 128, height: 128, mode: 'stretch' } }, rotated);
    assertBox(upright.find((d) => d.classId === 0)!.box, RED, 4);
    const stored = await detect({ auto_orient: false, resize: { enabled: true, width: 128, height: 128, mode: 'stretch' } }, rotated);
    assert.deepEqual(stored.map((d) => d.classId).sort(), [0, 1]);
    assertBox(stored.find((d) => d.classId === 0)!.box, RED, 4);
  });

  it('classifies the preprocessed image: a crop that keeps only green pixels answers green', async () => {
    // Scores = mean of each channel: the class of the dominant colour wins.
    const g = new OnnxGraph('mean-colour');
    const images = g.input('images', [1, 3, 64, 64]);
    g.op('Reshape', [g.op('ReduceMean', [images], { axes: [2, 3], keepdims: 0 }), g.ints([1, 3])], {}, 'probs');
    g.output('probs', [1, 3]);
    const model = g.toBytes();
    const names = ['red', 'green', 'blue'];
    const crop = { static_crop: { enabled: true, x_min: 70, x_max: 90, y_min: 30, y_max: 80 } };
    const plain = await ImageClassifier.load(pool, 'cls-plain', model, names);
    const served = await ImageClassifier.load(pool, 'cls-served', withPreprocessing(model, crop), names);
    const picture = await squaresPng(WIDTH, HEIGHT, [{ x: 0, y: 0, width: 160, height: 128, colour: [255, 0, 0] }, { x: 160, y: 0, width: 96, height: 128, colour: [0, 255, 0] }]);
    assert.equal((await plain.classify(picture)).className, 'red');
    assert.equal((await served.classify(picture)).className, 'green');
  });
});
