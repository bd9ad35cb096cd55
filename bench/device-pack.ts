/**
 * The CUDA check of issue 28 ("everything runs unchanged on a CUDA worker, `device: auto`"), prepared here for a
 * machine that has a GPU but no Node: the shared datasets are imported and versioned through the API (in process,
 * IMPORT_ROOT = ../shared/datasets, full size, their own splits), each run's version is written in the trainer's
 * layout by the service's own `materialise`, and its `run.json` holds what the service writes (the adapter's
 * parameters as the benches post them, `device: auto`). `bench/device-run.py` then runs the trainers there in order
 * and prints what each reached. The folder is `.device-pack/` (ignored by git; carry it).
 *
 *   npx tsx bench/device-pack.ts               then, on the GPU machine: python3 bench/device-run.py
 *   python3 bench/device-run.py --device=cpu --scale=0.05    (here: checks the pack and the runner in a minute)
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { adapterNamed } from '../src/training/adapters.js';
import { startTestApp } from '../test/helpers/test-app.js';
import { DATASETS, everyOtherByName, importAndVersion } from './lib/training.js';
import { inProcessApi, trainingService } from './lib/training-service.js';

const PACK = resolve('.device-pack');

interface Run {
  name: string;
  dataset: string;
  /** Keeps every other training image (by file name): the fine-tune base's half. */
  half?: boolean;
  adapter: string;
  body: Record<string, number>;
  budgetS: number;
  /** The run whose checkpoint this one starts from (`base_model_id` on the service). */
  base?: string;
}

// In order of importance: a run cut off by the machine's time limit loses the least. The targets name no
// classifier, and the tree that travels is limited to 64 MiB, so fresh-rotten-cls (21 MB) stays here.
const DETECT = { imgsz: 416, batch: 16, epochs: 1000 };
const SEGMENT = { imgsz: 256, batch: 8, epochs: 1000 };
const RUNS: Run[] = [
  { name: 'detect-scratch', dataset: 'indian-vehicles-yolo', adapter: 'versa-detect', body: DETECT, budgetS: 90 },
  { name: 'detect-base-half', dataset: 'indian-vehicles-yolo', half: true, adapter: 'versa-detect', body: DETECT, budgetS: 60 },
  { name: 'detect-fine-tune', dataset: 'indian-vehicles-yolo', adapter: 'versa-detect', body: DETECT, budgetS: 30, base: 'detect-base-half' },
  { name: 'detect-scratch-short', dataset: 'indian-vehicles-yolo', adapter: 'versa-detect', body: DETECT, budgetS: 30 },
  { name: 'semantic-plants', dataset: 'plants-semantic-masks', adapter: 'versa-segment', body: SEGMENT, budgetS: 60 },
  { name: 'instance-plants', dataset: 'plants-coco-seg', adapter: 'versa-segment', body: SEGMENT, budgetS: 60 },
  { name: 'semantic-indoor', dataset: 'indoor-semantic-masks', adapter: 'versa-segment', body: SEGMENT, budgetS: 60 },
];

const t = await startTestApp({ IMPORT_ROOT: DATASETS });
try {
  const owner = await t.user();
  const api = inProcessApi(owner);
  const training = trainingService(t);
  await rm(PACK, { recursive: true, force: true });
  const written = new Map<string, Record<string, number>>();
  const manifest = [];
  for (const run of RUNS) {
    const data = `${run.dataset}${run.half ? '-half' : ''}`;
    if (!written.has(data)) {
      const { versionId } = await importAndVersion(api, run.dataset, { name: data, ...(run.half ? { keepTrain: everyOtherByName } : {}) });
      const folder = await training.materialise(versionId, join(PACK, 'data', data));
      written.set(data, folder.counts);
    }
    const adapter = adapterNamed(run.adapter)!;
    const config = {
      model: adapter.defaultModel, epochs: run.body.epochs, imgsz: run.body.imgsz, batch: run.body.batch, device: 'auto', seed: 0,
      time_budget_s: run.budgetS, require_ready: false,
    };
    manifest.push({ name: run.name, script: adapter.script, data, counts: written.get(data), base: run.base ?? null, config });
  }
  await mkdir(PACK, { recursive: true });
  await writeFile(join(PACK, 'manifest.json'), JSON.stringify(manifest, null, 1));
  console.table(manifest.map((m) => ({ run: m.name, script: m.script, data: m.data, ...m.counts, budget_s: m.config.time_budget_s, base: m.base ?? '' })));
} finally {
  await t.close();
}
