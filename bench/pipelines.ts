/**
 * Pipelines benchmark (issue 16).
 *
 * 1. Throughput: a pipeline `select_images → detect → write_annotations` over N images against the batch
 *    auto-annotate route (`POST /api/projects/{id}/auto-annotate/yolo`, a job over every image) on the same images
 *    and model, on one server (a separate process), taking turns, R rounds; ratio = auto-annotate time / pipeline
 *    time per round (≥ 0.9 is the target: the engine adds ≤ 10 %), median of the rounds.
 * 2. Validation of a 50-step definition: in process (the validator alone) and through `POST /api/pipelines/validate`.
 *
 *   npx tsx bench/pipelines.ts [images=2000] [rounds=3] [--input 320]
 *
 * The detector is a YOLOv8n-sized graph with random weights (bench/inference-models.ts) at `--input` pixels square;
 * images are generated 640 × 480 JPEGs. Prints tables; asserts nothing.
 */
import { generateShapesImage } from '../src/synthetic/index.js';
import { PluginRegistry } from '../src/plugins/plugin-registry.js';
import { builtinSteps } from '../src/modules/pipelines/builtin-steps.service.js';
import { validateDefinition } from '../src/modules/pipelines/pipeline-validation.logic.js';
import { buildYolov8nLike } from './inference-models.js';
import { blobOf, median, startServer, withServerNodeFlags, type BenchServer, waitFor } from './lib/server.js';

await withServerNodeFlags();
const args = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--input');
const images = Number(args[0] ?? 2000);
const rounds = Number(args[1] ?? 3);
const inputAt = process.argv.indexOf('--input');
const inputSize = inputAt > 0 ? Number(process.argv[inputAt + 1]) : 320;
const CLASS_NAMES = Array.from({ length: 80 }, (_, i) => `class${i}`);


async function setUp(server: BenchServer): Promise<{ projectId: number; modelId: number }> {
  const { id: projectId } = await server.api('POST', '/api/projects', { name: 'pipeline bench' });
  const form = new FormData();
  form.append('file', blobOf(Buffer.from(buildYolov8nLike(inputSize).bytes)), 'yolov8n-like.onnx');
  form.append('name', 'detector');
  form.append('task', 'detect');
  form.append('class_names', JSON.stringify(CLASS_NAMES));
  const res = await fetch(`${server.url}/api/projects/${projectId}/models/upload`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: form });
  if (!res.ok) throw new Error(`model upload → ${res.status} ${await res.text()}`);
  const modelId = (await res.json()).id as number;
  for (let i = 0; i < images; i += 20) {
    const batch = new FormData();
    for (let j = i; j < Math.min(images, i + 20); j++) {
      const image = await generateShapesImage({ seed: 1000 + j, width: 640, height: 480, masks: false });
      batch.append('files', blobOf(image.data), `bench-${j}.jpg`);
    }
    const up = await fetch(`${server.url}/api/projects/${projectId}/images`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: batch });
    if (!up.ok) throw new Error(`upload → ${up.status} ${await up.text()}`);
  }
  return { projectId, modelId };
}

async function autoAnnotate(server: BenchServer, projectId: number, modelId: number): Promise<number> {
  const start = performance.now();
  const started = await server.api('POST', `/api/projects/${projectId}/auto-annotate/yolo`, { model: modelId, confidence: 0.25, iou: 0.45 });
  const job = await waitFor(() => server.api('GET', `/api/jobs/${started.job_id}`), (j) => j.status === 'succeeded' || j.status === 'failed', 200);
  if (job.status !== 'succeeded') throw new Error(`auto-annotate job failed: ${job.error}`);
  return performance.now() - start;
}

async function pipeline(server: BenchServer, pipelineId: number): Promise<number> {
  const start = performance.now();
  const run = await server.api('POST', `/api/pipelines/${pipelineId}/run`, {});
  const done = await waitFor(() => server.api('GET', `/api/pipeline-runs/${run.id}`), (r) => r.status !== 'queued' && r.status !== 'running', 200);
  if (done.status !== 'succeeded') throw new Error(`pipeline run failed: ${done.error}`);
  return performance.now() - start;
}

/** A 50-step definition: a select, 16 detect → filter → rule chains, and a report needing every rule. */
function fiftySteps(modelId: number | string): object {
  const steps: object[] = [{ id: 'select', type: 'select_images', params: { splits: ['train', 'valid'] } }];
  for (let i = 0; i < 16; i++) {
    steps.push({ id: `detect${i}`, type: 'detect', needs: ['select'], params: { model: modelId, confidence: 0.3 } });
    steps.push({ id: `filter${i}`, type: 'filter_detections', needs: [`detect${i}`], params: { min_confidence: 0.4, min_area: 100 } });
    steps.push({ id: `rule${i}`, type: 'rule', needs: [`filter${i}`], params: { subject: 'class0', requires: [{ class: 'class1', min_overlap: 0.5 }] } });
  }
  steps.push({ id: 'report', type: 'report', needs: Array.from({ length: 16 }, (_, i) => `rule${i}`) });
  return { name: 'fifty', steps };
}

function validationInProcess(): { median: number; p95: number } {
  const registry = new PluginRegistry();
  const unused = new Proxy({}, { get: () => { throw new Error('not used by validation'); } });
  for (const step of builtinSteps({ repository: unused as never, ports: unused as never, callerOf: unused as never, webhookAllowlist: [] })) registry.register(step);
  const definition = fiftySteps('detector');
  const facts = { models: [{ id: 1, name: 'detector', task: 'detect', lifecycle: 'development', class_names: CLASS_NAMES }], classes: [], versionIds: [] };
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    const start = performance.now();
    const problems = validateDefinition(definition, registry, facts);
    times.push(performance.now() - start);
    if (problems.length) throw new Error(JSON.stringify(problems[0]));
  }
  const sorted = times.slice(20).sort((a, b) => a - b);
  return { median: median(sorted), p95: sorted[Math.floor(sorted.length * 0.95)] };
}

const server = await startServer();
try {
  console.log(`setting up: ${images} images, detector input ${inputSize}…`);
  const { projectId, modelId } = await setUp(server);
  const created = await server.api('POST', '/api/pipelines', {
    project_id: projectId,
    definition: {
      name: 'select → detect → write',
      steps: [
        { id: 'select', type: 'select_images' },
        { id: 'detect', type: 'detect', needs: ['select'], params: { model: modelId, confidence: 0.25, iou: 0.45 } },
        { id: 'write', type: 'write_annotations', needs: ['detect'] },
      ],
    },
  });
  // Warm-up: both paths load the model into the batch pool and reach steady state on 1 run each over a few images.
  await autoAnnotate(server, projectId, modelId);
  const rows: { round: number; auto: number; pipe: number; ratio: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate who goes first, so neither always runs on a warmer (or busier) machine.
    let auto: number;
    let pipe: number;
    if (round % 2 === 0) {
      auto = await autoAnnotate(server, projectId, modelId);
      pipe = await pipeline(server, created.id);
    } else {
      pipe = await pipeline(server, created.id);
      auto = await autoAnnotate(server, projectId, modelId);
    }
    rows.push({ round, auto, pipe, ratio: auto / pipe });
    console.log(`round ${round}: auto-annotate ${(images / (auto / 1000)).toFixed(1)} images/s, pipeline ${(images / (pipe / 1000)).toFixed(1)} images/s, ratio ${(auto / pipe).toFixed(3)}`);
  }
  console.table(rows.map((r) => ({ round: r.round, 'auto-annotate s': (r.auto / 1000).toFixed(1), 'pipeline s': (r.pipe / 1000).toFixed(1), 'pipeline / auto-annotate throughput': r.ratio.toFixed(3) })));
  console.log(`median throughput ratio (pipeline / auto-annotate): ${median(rows.map((r) => r.ratio)).toFixed(3)} (target ≥ 0.9)`);

  const local = validationInProcess();
  const definition = fiftySteps(modelId);
  const http: number[] = [];
  for (let i = 0; i < 120; i++) {
    const start = performance.now();
    const answer = await server.api('POST', `/api/pipelines/validate?project_id=${projectId}`, definition);
    http.push(performance.now() - start);
    if (!answer.valid) throw new Error(JSON.stringify(answer.errors[0]));
  }
  const h = http.slice(20).sort((a, b) => a - b);
  console.table([
    { what: '50-step validation, in process', 'median ms': local.median.toFixed(3), 'p95 ms': local.p95.toFixed(3) },
    { what: '50-step validation, POST /api/pipelines/validate?project_id= (HTTP round trip, project lookups)', 'median ms': median(h).toFixed(2), 'p95 ms': h[Math.floor(h.length * 0.95)].toFixed(2) },
  ]);
} finally {
  await server.stop();
}
