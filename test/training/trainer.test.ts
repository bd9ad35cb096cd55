import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { pythonPath, TRAINER_DIR } from '../../src/training/python.js';
import { writeShapesFolder } from '../helpers/training-data.js';

const run = promisify(execFile);

/** The detector trainer run directly, as Versa runs it: JSON lines, and the same seed on CPU gives the same numbers. */
describe('versa-detect trainer', { timeout: 10 * 60_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-trainer-'));
    await writeShapesFolder(join(dir, 'data'), 'determinism', { train: 8, valid: 4, test: 0 }, { width: 96, height: 80 });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const train = async (name: string) => {
    const config = join(dir, `${name}.json`);
    await writeFile(config, JSON.stringify({ data_dir: join(dir, 'data'), out_dir: join(dir, name), model: 'versa-detect-n', epochs: 2, imgsz: 64, batch: 4, seed: 5, device: 'cpu' }));
    const { stdout } = await run(pythonPath(), [join(TRAINER_DIR, 'versa_detect.py'), '--config', config], { maxBuffer: 16 * 1024 * 1024 });
    return stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  };

  it('speaks JSON lines (start, epochs, final) and repeats its metrics exactly with the same seed', async () => {
    const first = await train('a');
    const second = await train('b');
    assert.equal(first[0].event, 'start');
    assert.equal(first[0].env.device, 'cpu');
    const epochs = first.filter((e) => e.event === 'epoch');
    assert.deepEqual(epochs.map((e) => e.epoch), [1, 2]);
    const final = first.find((e) => e.event === 'final');
    assert.deepEqual(final.artifacts, { onnx: 'weights/best.onnx', pt: 'weights/best.pt', results: 'results.csv', args: 'args.yaml', evaluation: 'evaluation.json' });
    const strip = (events: any[]) => events.filter((e) => e.event === 'epoch').map(({ time, eta_seconds, ...rest }) => rest);
    assert.deepEqual(strip(second), strip(first));
    assert.deepEqual(second.find((e) => e.event === 'final').metrics, final.metrics);
  });
});
