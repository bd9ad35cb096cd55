import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parseResultsCsv } from '../../src/modules/models/run-metrics.adapter.js';
import { pythonPath, TRAINER_DIR } from '../../src/training/python.js';

const run = promisify(execFile);
const fixtures = join(import.meta.dirname, '..', 'fixtures');

/** Runs `python3 -m versa_trainer.evaluate` (the one metric implementation) on a spec; returns its JSON. */
async function evaluate(dir: string, spec: unknown): Promise<any> {
  const path = join(dir, `spec-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(path, JSON.stringify(spec));
  const { stdout } = await run(pythonPath(), ['-m', 'versa_trainer.evaluate', '--input', path], { cwd: TRAINER_DIR });
  return JSON.parse(stdout);
}

describe('metrics (trainer/versa_trainer/metrics.py)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-metrics-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('matches pycocotools on mAP50 and mAP50-95, overall and per class, to within 0.001', async () => {
    const { cases } = JSON.parse(await readFile(join(fixtures, 'coco-metrics', 'cases.json'), 'utf8'));
    assert.equal(cases.length, 3);
    for (const c of cases) {
      const out = await evaluate(dir, { task: 'detect', class_names: c.class_names, max_dets: c.max_dets, images: c.images });
      assert.ok(Math.abs(out.map50 - c.expected.map50) < 0.001, `case ${c.seed}: map50 ${out.map50} vs ${c.expected.map50}`);
      assert.ok(Math.abs(out.map50_95 - c.expected.map50_95) < 0.001, `case ${c.seed}: map50_95 ${out.map50_95} vs ${c.expected.map50_95}`);
      c.expected.per_class.forEach((expected: any, k: number) => {
        assert.ok(Math.abs(out.per_class[k].ap50 - expected.ap50) < 0.001, `case ${c.seed} class ${k} ap50`);
        assert.ok(Math.abs(out.per_class[k].ap50_95 - expected.ap50_95) < 0.001, `case ${c.seed} class ${k} ap50_95`);
      });
    }
  });

  it('scores perfect, empty and all-wrong predictions as COCO does', async () => {
    const images = [{ id: 1, gt: [[0, 10, 10, 50, 40]], pred: [[0, 10, 10, 50, 40, 0.9]] }, { id: 2, gt: [[1, 0, 0, 20, 20]], pred: [] }];
    const out = await evaluate(dir, { task: 'detect', class_names: ['a', 'b', 'c'], images });
    const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≠ ${b}`);
    close(out.per_class[0].ap50, 1);
    close(out.per_class[0].ap50_95, 1);
    assert.equal(out.per_class[1].ap50, 0);
    assert.equal(out.per_class[2].ap50, null, 'a class without ground truth is left out');
    close(out.map50, 0.5);
    close(out.precision, 0.5);
  });

  it('gives each class its PR curve and F1-maximising threshold, and the errors at those thresholds (hand-computed)', async () => {
    // Class a: 0.9 right, 0.8 wrong (it sits on the b box), 0.7 right of 2 → precision 1, 1/2, 2/3 at recall 1/2, 1/2, 1:
    // F1 2/3, 1/2, 4/5, so the threshold is 0.7 (F1 0.8); interpolated precision is 1 up to recall 0.5, then 2/3.
    // Class b: two wrong detections → F1 0 everywhere, no threshold (0.25 is used for its errors).
    const images = [
      { id: 1, gt: [[0, 0, 0, 10, 10], [1, 20, 20, 10, 10]], pred: [[0, 0, 0, 10, 10, 0.9], [0, 20, 20, 10, 10, 0.8], [1, 50, 50, 5, 5, 0.6]] },
      { id: 2, gt: [[0, 0, 0, 10, 10]], pred: [[0, 0, 0, 10, 10, 0.7], [1, 30, 30, 10, 10, 0.5]] },
    ];
    const out = await evaluate(dir, { task: 'detect', class_names: ['a', 'b'], images, analysis: true });
    const [a, b] = out.per_class;
    assert.equal(a.conf_threshold, 0.7);
    assert.ok(Math.abs(a.f1 - 0.8) < 1e-9, `f1 ${a.f1}`);
    assert.equal(a.pr_curve.length, 101);
    assert.deepEqual(a.pr_curve, [...Array(51).fill(1), ...Array(50).fill(0.6667)]);
    assert.ok(Math.abs(a.ap50 - (51 + 50 * (2 / 3)) / 101) < 1e-9, `ap50 ${a.ap50}`);
    assert.equal(b.conf_threshold, null);
    assert.equal(b.f1, 0);
    // Rows: true a, b, background; columns: predicted a, b, background. The a box on the b object is a confusion.
    assert.deepEqual(out.confusion, [[2, 0, 0], [1, 0, 0], [0, 2, 0]]);
    assert.deepEqual(
      Object.fromEntries(Object.entries(out.images).map(([id, e]: [string, any]) => [id, [e.false_positives, e.false_negatives, e.confusions, e.predictions.length]])),
      { 1: [1, 0, 1, 3], 2: [1, 0, 0, 2] },
    );
  });

  it('computes accuracy, top-5, the confusion matrix and per-class precision/recall for classifiers', async () => {
    const out = await evaluate(dir, {
      task: 'classify',
      class_names: ['cat', 'dog', 'fox'],
      labels: [0, 0, 1, 1, 2, 2],
      scores: [[0.9, 0.1, 0], [0.2, 0.7, 0.1], [0.1, 0.8, 0.1], [0.3, 0.6, 0.1], [0.1, 0.1, 0.8], [0.5, 0.2, 0.3]],
    });
    assert.equal(out.accuracy, 4 / 6);
    assert.equal(out.top5, 1);
    assert.deepEqual(out.confusion, [[1, 1, 0], [0, 2, 0], [1, 0, 1]]);
    assert.equal(out.per_class[1].precision, 2 / 3);
    assert.equal(out.per_class[1].recall, 1);
  });
});

describe('Ultralytics run folders', () => {
  it("reads both styles of Ultralytics' results.csv under Versa's metric names (TypeScript, run discovery)", async () => {
    const now = parseResultsCsv(await readFile(join(fixtures, 'ultralytics-run', 'detect', 'train', 'results.csv'), 'utf8'))!;
    assert.equal(now.epoch, 3);
    assert.equal(now.map50, 0.41227);
    assert.equal(now.map50_95, 0.19874);
    assert.equal(now.precision, 0.51204);
    assert.equal(now['train/box_loss'], 2.51109);
    const old = parseResultsCsv(await readFile(join(fixtures, 'ultralytics-run', 'detect', 'train-old', 'results.csv'), 'utf8'))!;
    assert.equal(old.epoch, 2);
    assert.equal(old.map50, 0.31);
    assert.equal(old.recall, 0.4);
    assert.equal(parseResultsCsv('epoch,time\n'), null);
  });

  it('the ultralytics adapter collects history, arguments, best epoch and weights from a run folder (Python)', async () => {
    const script = 'import json,sys; from versa_trainer.ultralytics import collect_run; print(json.dumps(collect_run(sys.argv[1])))';
    const { stdout } = await run(pythonPath(), ['-c', script, join(fixtures, 'ultralytics-run', 'detect', 'train')], { cwd: TRAINER_DIR });
    const collected = JSON.parse(stdout);
    assert.equal(collected.history.length, 3);
    assert.equal(collected.history[2].map50, 0.41227);
    assert.ok(Math.abs(collected.history[0].train_loss - (3.41862 + 4.95501 + 3.90217)) < 1e-9);
    assert.equal(collected.best.epoch, 3);
    assert.equal(collected.args.imgsz, 320);
    assert.equal(collected.args.model, 'yolov8n.yaml');
    assert.equal(collected.args.conf, null);
    assert.equal(collected.args.pretrained, false);
    assert.deepEqual(collected.weights, { 'best.pt': 'weights/best.pt', 'last.pt': 'weights/last.pt' });
    const { stdout: old } = await run(pythonPath(), ['-c', script, join(fixtures, 'ultralytics-run', 'detect', 'train-old')], { cwd: TRAINER_DIR });
    assert.equal(JSON.parse(old).history[1].map50_95, 0.12);
  });
});
