/**
 * A detector trained on the GPU machine served here (issue 28's CUDA check, after bench/device-run.py): the ONNX file
 * the run wrote is registered in a project holding the same dataset (`POST /api/projects/{id}/models`, MODELS_ROOT =
 * the file's folder), auto-annotate predicts the valid images on this machine's CPU (onnxruntime-node), and the
 * trainer's metric code scores them. With the run's summary.json beside the file, prints the run's own valid mAP50
 * beside it: the served model should reproduce it.
 *
 *   npx tsx bench/device-serve.ts <folder of the run's files>/detect-scratch.onnx [dataset=indian-vehicles-yolo]
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { startTestApp } from '../test/helpers/test-app.js';
import { DATASETS, importAndVersion } from './lib/training.js';
import { inProcessApi, scoreServedDetector } from './lib/training-service.js';

const file = resolve(process.argv[2] ?? '');
const dataset = process.argv[3] ?? 'indian-vehicles-yolo';
if (!existsSync(file)) throw new Error(`usage: npx tsx bench/device-serve.ts <file.onnx> [dataset]`);

const t = await startTestApp({ IMPORT_ROOT: DATASETS, MODELS_ROOT: dirname(file) });
try {
  const owner = await t.user();
  const api = inProcessApi(owner);
  const { projectId, versionId } = await importAndVersion(api, dataset);
  const model = await api('POST', `/api/projects/${projectId}/models`, { path: file });
  const { served, nothing } = await scoreServedDetector(t, owner, projectId, versionId, model.id);
  const summary = join(dirname(file), 'summary.json');
  const run = existsSync(summary) ? (JSON.parse(readFileSync(summary, 'utf8')) as any[]).find((r) => `${r.run}.onnx` === basename(file)) : undefined;
  console.table([{
    model: basename(file), task: model.task, imgsz: model.input_size ? `${model.input_size.width}×${model.input_size.height}` : '', 'trained on': run ? `${run.device}, torch ${run.torch}` : '?',
    'valid mAP50 served (CPU)': served.map50.toFixed(4), 'valid mAP50 the run measured': run?.map50?.toFixed(4) ?? '?',
    'valid mAP50-95 served': served.map50_95.toFixed(4), 'predict-nothing': nothing.map50.toFixed(4),
  }]);
} finally {
  await t.close();
}
