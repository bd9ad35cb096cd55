/**
 * The team quality report (issue 29) at scale: N images × 3 annotators (default 100k × 3), a tenth of the images
 * ground truth, 1–8 boxes of 5 classes per image; each annotator jitters every box, drops one now and then, adds a
 * stray one and gets a class wrong, at rates of their own. Data generated here, in memory, as the rows hold it (shapes
 * as JSON text). Timed: parsing the versions and computing every annotator's figures (ground-truth scores overall, per
 * class and by day; agreement with the others; time and objects), the per-image agreement of every overlapped image
 * and the consensus weights — what `GET …/quality-control/annotators` and `…/agreement` compute after reading the
 * rows. Target < 5 s. Reading the rows from the database is not included (one indexed scan of `qc_tasks`).
 * Medians of `rounds`. Usage: node --max-semi-space-size=32 --import tsx bench/quality-report.ts [images=100000] [rounds=3]
 * (the young-generation size `npm start` gives the server; with V8's default the report spends much longer in GC)
 */
import { Random } from '../src/lib/random.js';
import { consensusWeights, teamReport, type SubmittedVersion } from '../src/modules/quality-control/quality-report.logic.js';
import type { Shape } from '../src/modules/quality-control/shape-scores.logic.js';

const imageCount = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 3);
const ANNOTATORS = [{ id: 1, jitter: 1, drop: 0.05, stray: 0.03, wrong: 0.02 }, { id: 2, jitter: 3, drop: 0.1, stray: 0.05, wrong: 0.05 }, { id: 3, jitter: 6, drop: 0.2, stray: 0.1, wrong: 0.1 }];

const random = new Random(29);
const box = (class_id: number, x: number, y: number, width: number, height: number): Shape => ({ class_id, annotation_type: 'bbox', geometry: { x, y, width, height } });
const groundTruth = new Map<number, Shape[]>();
const rows: { image_id: number; user_id: number; shapes: string; active_ms: number; submitted_at: string }[] = [];
let objects = 0;
const t0 = performance.now();
for (let image = 1; image <= imageCount; image++) {
  const truth = Array.from({ length: random.int(1, 8) }, (_, k) => box(random.int(1, 5), k * 80 + random.int(0, 20), random.int(0, 400), random.int(20, 60), random.int(20, 60)));
  objects += truth.length;
  if (image % 10 === 0) groundTruth.set(image, truth);
  for (const a of ANNOTATORS) {
    const shapes: Shape[] = [];
    for (const s of truth) {
      if (random.chance(a.drop)) continue;
      const g = s.geometry as { x: number; y: number; width: number; height: number };
      const cls = random.chance(a.wrong) ? (s.class_id % 5) + 1 : s.class_id;
      shapes.push(box(cls, g.x + random.uniform(-a.jitter, a.jitter), g.y + random.uniform(-a.jitter, a.jitter), g.width, g.height));
    }
    if (random.chance(a.stray)) shapes.push(box(random.int(1, 5), 700, random.int(0, 400), 30, 30));
    rows.push({ image_id: image, user_id: a.id, shapes: JSON.stringify(shapes), active_ms: random.int(5_000, 60_000), submitted_at: `2026-12-0${1 + (image % 7)}T10:00:00.000Z` });
  }
}
console.log(`generated ${imageCount} images × ${ANNOTATORS.length} annotators (${objects} objects in the truth, ${groundTruth.size} ground-truth images) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const times: number[] = [];
const cpus: number[] = [];
let summary = '';
for (let round = 0; round < rounds; round++) {
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const versions: SubmittedVersion[] = rows.map((r) => ({ image_id: r.image_id, user_id: r.user_id, shapes: JSON.parse(r.shapes) as Shape[], active_ms: r.active_ms, submitted_at: r.submitted_at }));
  const { annotators: figures, images: agreement } = teamReport(versions, groundTruth, [], 0.7);
  const weights = consensusWeights(figures);
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  times.push(seconds);
  cpus.push(cpuSeconds);
  summary = figures.map((f) => `annotator ${f.user_id}: GT F1 ${f.ground_truth.f1?.toFixed(3)}, agreement ${f.agreement?.toFixed(3)}, weight ${weights.get(f.user_id)?.toFixed(3)}`).join('; ')
    + `; ${agreement.length} images with agreement, ${agreement.filter((r) => r.below_threshold).length} below 0.7`;
  console.log(`round ${round + 1}: ${seconds.toFixed(2)} s (CPU ${cpuSeconds.toFixed(2)} s, GC threads included)`);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
cpus.sort((a, b) => a - b);
console.log(summary);
console.log(`quality report, ${imageCount} images × ${ANNOTATORS.length} annotators: median ${median.toFixed(2)} s of ${rounds}, CPU median ${cpus[Math.floor(cpus.length / 2)].toFixed(2)} s (target < 5 s) ${median < 5 ? 'PASS' : 'FAIL'}`);
