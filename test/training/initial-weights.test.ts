import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { generateDataset, SHAPE_CLASSES } from '../../src/synthetic/index.js';
import { pythonPath, TRAINER_DIR } from '../../src/training/python.js';
import { writeShapesFolder } from '../helpers/training-data.js';

const run = promisify(execFile);

/**
 * Operator-supplied weights, loaded by the trainers themselves (issue 28): a torchvision state dict goes into the
 * classifier's network (all but ImageNet's last layer), a file that pickles code is refused without being run, and
 * weights that do not fit the detector are refused by name.
 */
describe('initial weights in the trainers', { timeout: 10 * 60_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-init-'));
    await writeShapesFolder(join(dir, 'detect'), 'init-weights', { train: 4, valid: 2, test: 0 }, { width: 64, height: 64 });
    // A classification folder: each image labelled with its one shape's class.
    const images = await generateDataset('init-classify', 8, { width: 64, height: 64, count: [1, 1], masks: false, format: 'jpeg' });
    await mkdir(join(dir, 'classify', 'images'), { recursive: true });
    const entries = await Promise.all(images.map(async (image) => {
      await writeFile(join(dir, 'classify', 'images', image.filename), image.data);
      return { file: `images/${image.filename}`, width: 64, height: 64, label: image.shapes[0].classIndex };
    }));
    await writeFile(join(dir, 'classify', 'dataset.json'), JSON.stringify({
      task: 'classify', names: SHAPE_CLASSES.map((c) => c.name), splits: { train: entries.slice(0, 6), valid: entries.slice(6) },
    }));
    // What an operator would put under MODELS_ROOT: torchvision's mobilenet_v3_small state dict (ImageNet's 1000
    // classes; one tensor set to a value training at a vanishing rate cannot move), and a file pickling a whole module.
    await python(`
import torch, torchvision
state = torchvision.models.mobilenet_v3_small(weights=None).state_dict()
state["features.0.0.weight"].fill_(0.25)
torch.save(state, "${dir}/mobilenet_v3_small.pth")
torch.save(torch.nn.Linear(2, 2), "${dir}/module.pt")
`);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const python = (code: string) => run(pythonPath(), ['-c', code], { maxBuffer: 16 * 1024 * 1024 });

  /** Runs an adapter; its events, and whether it exited 0. */
  const train = async (script: string, name: string, config: Record<string, unknown>) => {
    const path = join(dir, `${name}.json`);
    await writeFile(path, JSON.stringify({ out_dir: join(dir, name), epochs: 1, batch: 4, seed: 1, device: 'cpu', ...config }));
    let stdout: string;
    let ok = true;
    try {
      stdout = (await run(pythonPath(), [join(TRAINER_DIR, script), '--config', path], { maxBuffer: 16 * 1024 * 1024 })).stdout;
    } catch (err) {
      stdout = (err as { stdout: string }).stdout;
      ok = false;
    }
    return { ok, events: stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)) };
  };

  it("loads a torchvision state dict into the classifier's network, all but the last layer", async () => {
    const { ok, events } = await train('versa_classify.py', 'pretrained', {
      data_dir: join(dir, 'classify'), model: 'mobilenet_v3_small', imgsz: 64, lr: 1e-12, init_weights: join(dir, 'mobilenet_v3_small.pth'),
    });
    assert.ok(ok, JSON.stringify(events.at(-1)));
    const start = events.find((e) => e.event === 'started');
    assert.equal(start.init.source, 'pretrained');
    assert.deepEqual(start.init.not_loaded, ['classifier.3.bias', 'classifier.3.weight']);
    assert.equal(start.init.tensors_loaded, start.init.tensors_total - 2);
    const { stdout } = await python(`
import torch
state = torch.load("${dir}/pretrained/weights/best.pt", weights_only=True)
print(state["model"]["inner.features.0.0.weight"].mean().item(), state["model"]["inner.classifier.3.weight"].shape[0])`);
    const [mean, rows] = stdout.trim().split(' ').map(Number);
    assert.ok(Math.abs(mean - 0.25) < 1e-6, `the first convolution holds the file's weights: mean ${mean}`);
    assert.equal(rows, SHAPE_CLASSES.length, "the last layer has this run's classes");
  });

  it("fine-tunes a classifier from its checkpoint: each class's output row follows its name", async () => {
    const base = await train('versa_classify.py', 'classifier-base', { data_dir: join(dir, 'classify'), model: 'mobilenet_v3_small', imgsz: 64 });
    assert.ok(base.ok, JSON.stringify(base.events.at(-1)));
    // The same images under other names: one class renamed (new), the rest in reverse order.
    const names = SHAPE_CLASSES.map((c) => c.name);
    const renamed = ['hexagon', ...names.slice(0, -1).reverse()];
    const label = (old: number) => (old === names.length - 1 ? 0 : names.length - 1 - old);
    const dataset = JSON.parse(await readFile(join(dir, 'classify', 'dataset.json'), 'utf8'));
    for (const entries of Object.values(dataset.splits) as { label: number }[][]) for (const e of entries) e.label = label(e.label);
    await mkdir(join(dir, 'renamed'));
    await symlink(join(dir, 'classify', 'images'), join(dir, 'renamed', 'images'));
    await writeFile(join(dir, 'renamed', 'dataset.json'), JSON.stringify({ ...dataset, names: renamed }));
    const tuned = await train('versa_classify.py', 'classifier-tuned', {
      data_dir: join(dir, 'renamed'), model: 'mobilenet_v3_small', imgsz: 64, lr: 1e-12, init_weights: join(dir, 'classifier-base', 'weights', 'best.pt'),
    });
    assert.ok(tuned.ok, JSON.stringify(tuned.events.at(-1)));
    assert.deepEqual(tuned.events.find((e) => e.event === 'started').init, {
      source: 'checkpoint', matched: renamed.slice(1), new: ['hexagon'], dropped: [names[names.length - 1]],
    });
    const { stdout } = await python(`
import torch
key = "inner.classifier.3.weight"
base = torch.load("${dir}/classifier-base/weights/best.pt", weights_only=True)["model"][key]
tuned = torch.load("${dir}/classifier-tuned/weights/best.pt", weights_only=True)["model"][key]
print(all(torch.allclose(tuned[i], base[${names.length - 1} - i], atol=1e-5) for i in range(1, ${names.length})), torch.allclose(tuned[0], base[${names.length - 1}], atol=1e-3))`);
    assert.equal(stdout.trim(), 'True False', 'matched rows come from the base by name; the new class has fresh rows');
  });

  it('refuses a file that pickles code, without running it', async () => {
    const { ok, events } = await train('versa_detect.py', 'pickled', { data_dir: join(dir, 'detect'), model: 'versa-detect-n', imgsz: 64, init_weights: join(dir, 'module.pt') });
    assert.equal(ok, false);
    const error = events.find((e) => e.event === 'failed');
    assert.match(error.message, /module\.pt cannot be read as plain weights \(tensors only/);
    assert.equal(events.some((e) => e.event === 'started'), false, 'refused before the run started');
  });

  it("refuses weights that do not fit the detector, saying why", async () => {
    const { ok, events } = await train('versa_detect.py', 'mismatch', { data_dir: join(dir, 'detect'), model: 'versa-detect-n', imgsz: 64, init_weights: join(dir, 'mobilenet_v3_small.pth') });
    assert.equal(ok, false);
    assert.match(events.find((e) => e.event === 'failed').message, /mobilenet_v3_small\.pth fits 0 of the \d+ tensors of versa-detect-n.*backbone is Versa's own/);
  });
});
