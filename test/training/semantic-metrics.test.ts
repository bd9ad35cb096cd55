import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { pythonPath, TRAINER_DIR } from '../../src/training/python.js';

const run = promisify(execFile);

/** mIoU and per-class IoU of versa-segment (trainer/versa_trainer/metrics.py), through `python3 -m versa_trainer.evaluate`. */
describe('semantic segmentation metrics', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-semantic-metrics-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('gives per-class IoU, mIoU with and without background and pixel accuracy (hand-computed), leaving ignored pixels out', async () => {
    // Two images; 0 background, 1 = leaf, 2 = pot, 3 = stem (never present nor predicted), 255 ignored.
    const spec = {
      task: 'semantic',
      class_names: ['leaf', 'pot', 'stem'],
      truth: [[[0, 0, 1, 1], [0, 2, 2, 255]], [[1, 1], [0, 0]]],
      pred: [[[0, 1, 1, 1], [0, 2, 0, 0]], [[1, 0], [0, 2]]],
    };
    const path = join(dir, 'spec.json');
    await writeFile(path, JSON.stringify(spec));
    const out = JSON.parse((await run(pythonPath(), ['-m', 'versa_trainer.evaluate', '--input', path], { cwd: TRAINER_DIR })).stdout);
    // Background: TP 2 + 1 = 3, FP (truth 1 or 2 read as 0) 1 + 1 = 2, FN (truth 0 read as 1 or 2) 1 + 1 = 2 → 3/7.
    // Leaf: TP 2 + 1 = 3, FP 1, FN 1 → 3/5. Pot: TP 1, FP 1, FN 1 → 1/3. Stem: no pixels, no IoU.
    const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);
    close(out.background_iou, 3 / 7);
    assert.deepEqual(out.per_class.map((c: any) => [c.name, c.pixels, c.predicted_pixels]), [['leaf', 4, 4], ['pot', 2, 2], ['stem', 0, 0]]);
    close(out.per_class[0].iou, 3 / 5);
    close(out.per_class[1].iou, 1 / 3);
    assert.equal(out.per_class[2].iou, null);
    close(out.miou, (3 / 7 + 3 / 5 + 1 / 3) / 3);
    close(out.miou_fg, (3 / 5 + 1 / 3) / 2);
    close(out.pixel_accuracy, 7 / 11);
  });
});
