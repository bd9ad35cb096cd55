/**
 * Automatic tracking (issue 26): MOTA and IDF1 of the tracker (src/modules/tracks/tracker.logic.ts) beside two
 * baselines, on detections made from a ground truth by perturbing it (box noise, misses that grow with occlusion,
 * low scores for occluded and blurred objects, false positives):
 *   - no association: every detection (score ≥ 0.5) is a new identity, frame by frame;
 *   - greedy IoU: each frame's detections (score ≥ 0.5) go to the previous frame's boxes by highest IoU ≥ 0.3 first,
 *     the rest start identities (the classic IoU tracker, no motion, no second stage);
 *   - the tracker as the route runs it, with its boxes interpolated through the frames a track was followed unseen
 *     (what an accepted suggestion shows), and ablations: no second stage, no motion model;
 *   - the accepted track as stored: keyframes only where motion departs from interpolation (IoU 0.9), against a
 *     keyframe on every frame (how many keyframes, and what interpolation costs in MOTA/IDF1).
 * Ground truths: a generated sequence of moving boxes of two classes (depth-ordered occlusion, crossings, births and
 * exits), and with `--mot DIR` real MOT sequences (DIR/<sequence>/gt/gt.txt, MOTChallenge layout); when a sequence
 * folder also holds `test.txt` (a tracker's output), its MOTA/IDF1 are printed to check the metrics against the
 * MOTChallenge devkit. Pure logic: no server, no files written.
 * Usage: npx tsx bench/tracker.ts [frames=900] [seeds=3] [--mot DIR]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { boxIou, motMetrics, type MotBox, type MotMetrics } from '../src/lib/mot-metrics.js';
import { Random } from '../src/lib/random.js';
import { keyframeIndices, lerpBox, type BoxAt } from '../src/modules/tracks/track-keyframes.logic.js';
import { trackDetections, type Detection, type TrackerOptions, type TrackResult } from '../src/modules/tracks/tracker.logic.js';

const args = process.argv.slice(2);
const motAt = args.indexOf('--mot');
const motDir = motAt === -1 ? null : args[motAt + 1];
const positional = args.filter((_, i) => motAt === -1 || (i !== motAt && i !== motAt + 1));
const frameCount = Number(positional[0] ?? 900);
const seeds = Number(positional[1] ?? 3);

type Frames = { frame: number; detections: Detection[] }[];

function gaussian(rand: Random): number {
  const u = Math.max(rand.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand.next());
}

/** Moving boxes of two classes on 1280 × 720: tall "people" and wide "cars", with velocity drift, births and exits. */
function generateSequence(rand: Random, frames: number): MotBox[] {
  const W = 1280;
  const H = 720;
  interface Mover { id: number; cls: number; x: number; y: number; w: number; h: number; vx: number; vy: number; until: number }
  let next = 1;
  const spawn = (frame: number): Mover => {
    const cls = rand.chance(0.7) ? 0 : 1;
    const w = cls === 0 ? rand.uniform(30, 70) : rand.uniform(80, 160);
    const h = cls === 0 ? w * rand.uniform(2, 2.8) : w * rand.uniform(0.5, 0.8);
    const speed = cls === 0 ? rand.uniform(1, 4) : rand.uniform(3, 12);
    const angle = rand.uniform(0, 2 * Math.PI);
    return {
      id: next++, cls, w, h, x: rand.uniform(0, W - w), y: rand.uniform(0, H - h),
      vx: speed * Math.cos(angle), vy: 0.4 * speed * Math.sin(angle), until: frame + rand.int(150, 700),
    };
  };
  let movers = Array.from({ length: 18 }, () => spawn(0));
  const gt: MotBox[] = [];
  for (let f = 1; f <= frames; f++) {
    if (rand.chance(0.06)) movers.push(spawn(f));
    for (const m of movers) {
      m.vx += 0.05 * gaussian(rand);
      m.vy += 0.03 * gaussian(rand);
      m.x += m.vx;
      m.y += m.vy;
    }
    movers = movers.filter((m) => f < m.until && m.x > -m.w * 0.7 && m.x < W - m.w * 0.3 && m.y > -m.h * 0.7 && m.y < H - m.h * 0.3);
    for (const m of movers) gt.push({ frame: f, id: m.id, classKey: m.cls, x: m.x, y: m.y, width: m.w, height: m.h });
  }
  return gt;
}

/** How much of each box is not covered by boxes nearer the camera (lower bottom edge = farther), sampled on a grid. */
function visibility(boxes: MotBox[]): number[] {
  return boxes.map((b) => {
    const front = boxes.filter((o) => o !== b && o.y + o.height > b.y + b.height && boxIou(o, b) > 0);
    if (front.length === 0) return 1;
    let seen = 0;
    const n = 8;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const x = b.x + ((i + 0.5) / n) * b.width;
        const y = b.y + ((j + 0.5) / n) * b.height;
        if (!front.some((o) => x >= o.x && x <= o.x + o.width && y >= o.y && y <= o.y + o.height)) seen++;
      }
    }
    return seen / (n * n);
  });
}

/**
 * A detector's output made from the ground truth: boxes jittered by 4 % of their size; an object mostly hidden is
 * missed half the time and scored low otherwise; 6 % of the rest missed, 12 % scored low (blur); false positives at
 * random (about 2 a frame, most scored low).
 */
function perturb(rand: Random, gt: MotBox[], size: { width: number; height: number }): Frames {
  const byFrame = new Map<number, MotBox[]>();
  for (const b of gt) byFrame.set(b.frame, [...(byFrame.get(b.frame) ?? []), b]);
  const frames = [...byFrame.keys()].sort((a, b) => a - b);
  const first = frames[0] ?? 1;
  const last = frames.at(-1) ?? 0;
  const out: Frames = [];
  for (let f = first; f <= last; f++) {
    const boxes = byFrame.get(f) ?? [];
    const seen = visibility(boxes);
    const detections: Detection[] = [];
    boxes.forEach((b, i) => {
      const v = seen[i];
      if (v < 0.2 || (v < 0.6 && rand.chance(0.5)) || rand.chance(0.06)) return;
      const score = v < 0.6 || rand.chance(0.12) ? rand.uniform(0.15, 0.5) : rand.uniform(0.55, 0.98);
      detections.push({
        x: b.x + 0.04 * b.width * gaussian(rand), y: b.y + 0.04 * b.height * gaussian(rand),
        width: b.width * (1 + 0.04 * gaussian(rand)), height: b.height * (1 + 0.04 * gaussian(rand)), score, classKey: b.classKey ?? 0,
      });
    });
    const falsePositives = Math.floor(rand.uniform(0, 4));
    for (let k = 0; k < falsePositives; k++) {
      const w = rand.uniform(20, 150);
      const h = rand.uniform(20, 150);
      detections.push({ x: rand.uniform(0, size.width - w), y: rand.uniform(0, size.height - h), width: w, height: h, score: rand.chance(0.85) ? rand.uniform(0.1, 0.5) : rand.uniform(0.5, 0.75), classKey: rand.chance(0.7) ? 0 : 1 });
    }
    out.push({ frame: f, detections });
  }
  return out;
}

const asMot = (frame: number, id: number | string, b: { x: number; y: number; width: number; height: number }, classKey: number | string): MotBox => ({
  frame, id, x: b.x, y: b.y, width: b.width, height: b.height, classKey,
});

function noAssociation(frames: Frames): MotBox[] {
  let id = 0;
  return frames.flatMap(({ frame, detections }) => detections.filter((d) => d.score >= 0.5).map((d) => asMot(frame, ++id, d, d.classKey)));
}

function greedyIou(frames: Frames): MotBox[] {
  let nextId = 0;
  let previous: MotBox[] = [];
  const out: MotBox[] = [];
  for (const { frame, detections } of frames) {
    const confident = detections.filter((d) => d.score >= 0.5);
    const pairs = previous.flatMap((p, i) => confident.map((d, j) => ({ i, j, iou: p.classKey === d.classKey ? boxIou(p, d) : 0 }))).filter((p) => p.iou >= 0.3).sort((a, b) => b.iou - a.iou);
    const taken = new Set<number>();
    const used = new Set<number>();
    const current: MotBox[] = confident.map((d) => asMot(frame, 0, d, d.classKey));
    for (const { i, j } of pairs) {
      if (taken.has(i) || used.has(j)) continue;
      taken.add(i);
      used.add(j);
      current[j].id = previous[i].id;
    }
    for (const box of current) if (box.id === 0) box.id = ++nextId;
    out.push(...current);
    previous = current;
  }
  return out;
}

/** Per frame from the first to the last box, boxes interpolated linearly between the given ones (what a track shows between keyframes). */
function interpolated(track: TrackResult, boxes: BoxAt[]): MotBox[] {
  const out: MotBox[] = [];
  for (let k = 0; k < boxes.length; k++) {
    const a = boxes[k];
    out.push(asMot(a.frame, track.id, a.box, track.classKey));
    const b = boxes[k + 1];
    if (!b) break;
    for (let f = a.frame + 1; f < b.frame; f++) out.push(asMot(f, track.id, lerpBox(a.box, b.box, (f - a.frame) / (b.frame - a.frame)), track.classKey));
  }
  return out;
}

interface Run { name: string; metrics: MotMetrics; keyframes?: number; boxes?: number }

function evaluate(gt: MotBox[], frames: Frames): Run[] {
  const runs: Run[] = [
    { name: 'no association (each detection ≥ 0.5 a new identity)', metrics: motMetrics(gt, noAssociation(frames)) },
    { name: 'greedy IoU (previous frame, ≥ 0.3)', metrics: motMetrics(gt, greedyIou(frames)) },
  ];
  const ours = (options: Partial<TrackerOptions>) => trackDetections(frames, options);
  const filled = (tracks: TrackResult[]) => tracks.flatMap((t) => interpolated(t, t.observations.map((o) => ({ frame: o.frame, box: o.box }))));
  const tracks = ours({});
  const detectedOnly = (t: TrackResult[]) => t.flatMap((x) => x.observations.map((o) => asMot(o.frame, x.id, o.box, x.classKey)));
  const noLow = ours({ lowScore: 0.5 });
  runs.push({ name: 'tracker, detected frames only', metrics: motMetrics(gt, detectedOnly(tracks)) });
  runs.push({ name: '  without the low-score stage', metrics: motMetrics(gt, detectedOnly(noLow)) });
  runs.push({ name: 'tracker + interpolation through gaps', metrics: motMetrics(gt, filled(tracks)) });
  runs.push({ name: '  without the low-score stage', metrics: motMetrics(gt, filled(noLow)) });
  runs.push({ name: '  without motion (last position)', metrics: motMetrics(gt, filled(ours({ motion: false }))) });
  runs.push({ name: '  confirmation after 1 match', metrics: motMetrics(gt, filled(ours({ confirmHits: 1 }))) });
  runs.push({ name: '  confirmation after 3 matches', metrics: motMetrics(gt, filled(ours({ confirmHits: 3 }))) });
  const every = tracks.reduce((n, t) => n + t.observations.length, 0);
  runs.push({ name: 'accepted: keyframe on every detected frame', metrics: motMetrics(gt, filled(tracks)), keyframes: every, boxes: every });
  for (const minIou of [0.9, 0.8, 0.7]) {
    let kept = 0;
    const hyp = tracks.flatMap((t) => {
      const boxes = t.observations.map((o) => ({ frame: o.frame, box: o.box }));
      const keys = keyframeIndices(boxes, minIou).map((i) => boxes[i]);
      kept += keys.length;
      return interpolated(t, keys);
    });
    runs.push({ name: `accepted: keyframes where motion departs (IoU ${minIou})`, metrics: motMetrics(gt, hyp), keyframes: kept, boxes: every });
  }
  return runs;
}

const pct = (v: number) => (100 * v).toFixed(1).padStart(6);
function print(title: string, runs: Run[][]): void {
  console.log(`\n${title}`);
  console.log(`${'method'.padEnd(58)}  MOTA   IDF1   MOTP    IDsw     FP     FN  keyframes`);
  for (let i = 0; i < runs[0].length; i++) {
    const all = runs.map((r) => r[i]);
    const mean = (f: (m: MotMetrics) => number) => all.reduce((s, r) => s + f(r.metrics), 0) / all.length;
    const kf = all[0].keyframes === undefined ? '' : `${(all.reduce((s, r) => s + r.keyframes!, 0) / all.reduce((s, r) => s + r.boxes!, 0) * 100).toFixed(1)} % of boxes`;
    console.log(`${all[0].name.padEnd(58)} ${pct(mean((m) => m.mota))} ${pct(mean((m) => m.idf1))} ${pct(mean((m) => m.motp))} ${mean((m) => m.idSwitches).toFixed(0).padStart(7)} ${mean((m) => m.falsePositives).toFixed(0).padStart(6)} ${mean((m) => m.misses).toFixed(0).padStart(6)}  ${kf}`);
  }
}

const readMot = (path: string): MotBox[] =>
  readFileSync(path, 'utf8').trim().split('\n').map((line) => {
    const [frame, id, x, y, width, height] = line.split(',').map(Number);
    return { frame, id, x, y, width, height, classKey: 0 };
  });

const started = performance.now();
const synthetic: Run[][] = [];
let gtBoxes = 0;
let gtIds = 0;
for (let seed = 1; seed <= seeds; seed++) {
  const rand = new Random(seed);
  const gt = generateSequence(rand, frameCount);
  gtBoxes += gt.length;
  gtIds += new Set(gt.map((b) => b.id)).size;
  synthetic.push(evaluate(gt, perturb(rand, gt, { width: 1280, height: 720 })));
}
print(`Generated sequences: ${seeds} × ${frameCount} frames at 1280 × 720, ${Math.round(gtIds / seeds)} identities and ${Math.round(gtBoxes / seeds)} boxes each (mean of ${seeds} seeds)`, synthetic);

if (motDir) {
  for (const sequence of readdirSync(motDir).sort()) {
    const gtPath = join(motDir, sequence, 'gt', 'gt.txt');
    if (!existsSync(gtPath)) continue;
    const gt = readMot(gtPath);
    const testPath = join(motDir, sequence, 'test.txt');
    if (existsSync(testPath)) {
      const m = motMetrics(gt, readMot(testPath));
      console.log(`\n${sequence}: metrics check on its test.txt — MOTA ${pct(m.mota)}  IDF1 ${pct(m.idf1)}  IDP ${pct(m.idp)}  IDR ${pct(m.idr)}  MOTP ${pct(m.motp)}  FP ${m.falsePositives}  FN ${m.misses}  IDsw ${m.idSwitches}`);
    }
    const runs = Array.from({ length: seeds }, (_, s) => evaluate(gt, perturb(new Random(100 + s), gt, { width: 640, height: 480 })));
    print(`${sequence}: real ground truth (${gt.length} boxes, ${new Set(gt.map((b) => b.id)).size} identities), detections made from it (mean of ${seeds} seeds)`, runs);
  }
}
console.log(`\n${((performance.now() - started) / 1000).toFixed(1)} s`);
