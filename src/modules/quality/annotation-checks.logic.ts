/** The image modality's annotation checks: geometry, pairs of boxes, per-class statistics and the class set. */
import type { CheckDefinition, Findings } from './check-catalog.logic.js';
import { iou, type DatasetSnapshot } from './dataset-snapshot.logic.js';
import { SPLIT_NAMES } from '../../lib/vocabulary.js';

type AnnotationCheck = CheckDefinition<DatasetSnapshot>;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Each pair of spatial annotations of one image that `test` accepts. */
function pairs(s: DatasetSnapshot, test: (a: number, b: number) => void): void {
  const a = s.annotations;
  s.forEachImage((_image, from, to) => {
    for (let p = from; p < to; p++) {
      const i = s.order[p];
      if (!a.spatial(i)) continue;
      for (let q = p + 1; q < to; q++) {
        const j = s.order[q];
        if (a.spatial(j)) test(i, j);
      }
    }
  });
}

/** Instances per class, overall and per split. */
function classCounts(s: DatasetSnapshot): Map<number, { total: number; bySplit: Record<string, number> }> {
  const out = new Map<number, { total: number; bySplit: Record<string, number> }>();
  for (const id of s.classes.keys()) out.set(id, { total: 0, bySplit: {} });
  const a = s.annotations;
  for (let k = 0; k < a.length; k++) {
    const entry = out.get(a.classId[k]);
    if (!entry) continue;
    entry.total++;
    const split = s.images[a.image[k]].split ?? 'unassigned';
    entry.bySplit[split] = (entry.bySplit[split] ?? 0) + 1;
  }
  return out;
}

/** The median (the mean of the middle two of an even count), by selection on a copy: linear, where sorting was not. */
function median(values: Float64Array): number {
  const a = Float64Array.from(values);
  const m = a.length >> 1;
  const upper = select(a, m);
  if (a.length % 2) return upper;
  let lower = -Infinity;
  for (let i = 0; i < m; i++) if (a[i] > lower) lower = a[i];
  return (lower + upper) / 2;
}

/** Hoare's selection: reorders `a` so that a[k] holds the k-th smallest, none after it smaller, none before larger. */
function select(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k];
}

function robustOutliers(s: DatasetSnapshot, findings: Findings, z: number): void {
  const a = s.annotations;
  // The measurable annotations grouped by class in one pass (counting sort into one index array).
  const slots = new Map<number, number>();
  const slotOf = new Int32Array(a.length).fill(-1);
  const counts: number[] = [];
  for (let k = 0; k < a.length; k++) {
    if (!a.spatial(k) || a.w[k] <= 0 || a.h[k] <= 0) continue;
    let slot = slots.get(a.classId[k]);
    if (slot === undefined) slots.set(a.classId[k], (slot = counts.push(0) - 1));
    counts[slot]++;
    slotOf[k] = slot;
  }
  const offsets = new Int32Array(counts.length + 1);
  counts.forEach((c, slot) => (offsets[slot + 1] = offsets[slot] + c));
  const fill = offsets.slice(0, counts.length);
  const grouped = new Int32Array(offsets[counts.length]);
  for (let k = 0; k < a.length; k++) if (slotOf[k] >= 0) grouped[fill[slotOf[k]]++] = k;
  for (const [classId, slot] of slots) {
    const count = counts[slot];
    if (count < 10) continue;
    const members = grouped.subarray(offsets[slot], offsets[slot + 1]);
    const area = new Float64Array(count);
    const aspect = new Float64Array(count);
    for (let m = 0; m < count; m++) {
      const k = members[m];
      area[m] = Math.log(a.w[k] * a.h[k]);
      aspect[m] = Math.log(a.w[k] / a.h[k]);
    }
    for (const [name, values] of [
      ['area', area],
      ['aspect ratio', aspect],
    ] as const) {
      const med = median(values);
      const deviations = new Float64Array(count);
      for (let m = 0; m < count; m++) deviations[m] = Math.abs(values[m] - med);
      const mad = median(deviations) * 1.4826;
      if (mad < 1e-9) continue;
      for (let m = 0; m < count; m++) {
        const score = deviations[m] / mad;
        if (score <= z) continue;
        const k = members[m];
        findings.add(
          { image_id: s.images[a.image[k]].id, annotation_id: a.id[k] },
          () => `${s.className(classId)}: ${name} ${score.toFixed(1)} MADs from the class median (${Math.round(a.w[k])}×${Math.round(a.h[k])} px)`,
          score,
        );
      }
    }
  }
}

export const ANNOTATION_CHECKS: AnnotationCheck[] = [
  {
    id: 'unannotated_images',
    title: 'Images without annotations',
    modality: 'image',
    severity: 'warning',
    description: 'Images with no annotation at all (background images are fine when intended, but usually they are forgotten work).',
    params: {},
    message: (n) => `${plural(n, 'image')} without annotations`,
    run(s, _p, findings) {
      s.forEachImage((i, from, to) => {
        if (from === to) findings.add({ image_id: s.images[i].id }, () => `No annotations (${s.images[i].split ?? 'no split'})`);
      });
    },
  },
  {
    id: 'degenerate_annotations',
    title: 'Tiny or degenerate shapes',
    modality: 'image',
    severity: 'error',
    description: 'Boxes, polygons or masks with a side below min_side or an area below min_area pixels, and polygons with fewer than 3 points.',
    params: {
      min_side: { type: 'number', default: 2, min: 0, max: 10_000, description: 'Smallest accepted box side, in pixels' },
      min_area: { type: 'number', default: 16, min: 0, max: 1e8, description: 'Smallest accepted area, in square pixels' },
    },
    message: (n) => `${plural(n, 'shape')} tiny or degenerate`,
    run(s, p, findings) {
      const a = s.annotations;
      for (let k = 0; k < a.length; k++) {
        if (!a.spatial(k)) continue;
        const imageId = s.images[a.image[k]].id;
        if (a.type[k] === 1 && a.points[k] < 3) findings.add({ image_id: imageId, annotation_id: a.id[k] }, () => `Polygon with ${a.points[k]} points`, 1e9);
        else if (Math.min(a.w[k], a.h[k]) < p.min_side || a.area[k] < p.min_area) {
          findings.add({ image_id: imageId, annotation_id: a.id[k] }, () => `${Math.round(a.w[k] * 10) / 10}×${Math.round(a.h[k] * 10) / 10} px, area ${Math.round(a.area[k])}`, -a.area[k]);
        }
      }
    },
  },
  {
    id: 'outside_image',
    title: 'Shapes outside the image',
    modality: 'image',
    severity: 'error',
    description: 'Shapes extending more than tolerance pixels beyond the image border.',
    params: { tolerance: { type: 'number', default: 0.5, min: 0, max: 10_000, description: 'Pixels a shape may extend beyond the border' } },
    message: (n) => `${plural(n, 'shape')} extend beyond the image`,
    run(s, p, findings) {
      const a = s.annotations;
      for (let k = 0; k < a.length; k++) {
        if (!a.spatial(k)) continue;
        const image = s.images[a.image[k]];
        const beyond = Math.max(-a.x[k], -a.y[k], a.x[k] + a.w[k] - image.width, a.y[k] + a.h[k] - image.height);
        if (beyond > p.tolerance) findings.add({ image_id: image.id, annotation_id: a.id[k] }, () => `${beyond.toFixed(1)} px beyond the ${image.width}×${image.height} image`, beyond);
      }
    },
  },
  {
    id: 'touching_border',
    title: 'Shapes touching the border',
    modality: 'image',
    severity: 'info',
    description: 'Shapes within margin pixels of the image border: often truncated objects, worth a look when many.',
    params: { margin: { type: 'number', default: 1, min: 0, max: 10_000, description: 'Distance from the border that counts as touching' } },
    message: (n) => `${plural(n, 'shape')} touch the border`,
    run(s, p, findings) {
      const a = s.annotations;
      for (let k = 0; k < a.length; k++) {
        if (!a.spatial(k)) continue;
        const image = s.images[a.image[k]];
        const gap = Math.min(a.x[k], a.y[k], image.width - (a.x[k] + a.w[k]), image.height - (a.y[k] + a.h[k]));
        if (gap <= p.margin && gap >= -p.margin) findings.add({ image_id: image.id, annotation_id: a.id[k] }, () => 'Touches the image border');
      }
    },
  },
  {
    id: 'duplicate_boxes',
    title: 'Duplicate boxes',
    modality: 'image',
    severity: 'warning',
    description: 'Two shapes of the same class on one image overlapping with IoU ≥ min_iou (of their boxes). The later one is listed.',
    params: { min_iou: { type: 'number', default: 0.9, min: 0.01, max: 1, description: 'IoU from which two same-class shapes are duplicates' } },
    message: (n, p) => `${plural(n, 'shape')} duplicate another of the same class (IoU ≥ ${p.min_iou})`,
    run(s, p, findings) {
      const a = s.annotations;
      pairs(s, (i, j) => {
        if (a.classId[i] !== a.classId[j]) return;
        const v = iou(a, i, j);
        if (v >= p.min_iou) findings.add({ image_id: s.images[a.image[i]].id, annotation_id: a.id[j] }, () => `Duplicates annotation ${a.id[i]} (${s.className(a.classId[i])}, IoU ${v.toFixed(2)})`, v);
      });
    },
  },
  {
    id: 'overlapping_classes',
    title: 'Overlapping shapes of different classes',
    modality: 'image',
    severity: 'warning',
    description: 'Two shapes of different classes on one image with IoU ≥ min_iou: one of them is probably mislabelled.',
    params: { min_iou: { type: 'number', default: 0.8, min: 0.01, max: 1, description: 'IoU from which two different-class shapes are suspect' } },
    message: (n) => `${plural(n, 'pair')} of shapes of different classes overlap`,
    run(s, p, findings) {
      const a = s.annotations;
      pairs(s, (i, j) => {
        if (a.classId[i] === a.classId[j]) return;
        const v = iou(a, i, j);
        if (v >= p.min_iou) {
          findings.add(
            { image_id: s.images[a.image[i]].id, annotation_id: a.id[j] },
            () => `${s.className(a.classId[j])} overlaps ${s.className(a.classId[i])} (annotation ${a.id[i]}), IoU ${v.toFixed(2)}`,
            v,
          );
        }
      });
    },
  },
  {
    id: 'size_outliers',
    title: 'Per-class size or aspect outliers',
    modality: 'image',
    severity: 'info',
    description: 'Shapes whose log area or log aspect ratio is more than max_z median absolute deviations from their class median (classes with ≥ 10 shapes). Ranked by distance.',
    params: { max_z: { type: 'number', default: 4, min: 1, max: 100, description: 'Robust z-score above which a shape is an outlier' } },
    message: (n) => `${plural(n, 'shape')} far from their class's usual size or shape`,
    run(s, p, findings) {
      robustOutliers(s, findings, p.max_z);
    },
  },
  {
    id: 'class_imbalance',
    title: 'Class imbalance',
    modality: 'image',
    severity: 'warning',
    description: 'Used classes with fewer than 1/max_ratio of the largest class\'s instances.',
    params: { max_ratio: { type: 'number', default: 10, min: 1, max: 1e6, description: 'Largest accepted ratio of the largest to a class\'s instances' } },
    message: (n) => `${plural(n, 'class')} heavily outnumbered`,
    run(s, p, findings) {
      const counts = [...classCounts(s)].filter(([, c]) => c.total > 0);
      const largest = Math.max(0, ...counts.map(([, c]) => c.total));
      for (const [id, c] of counts) {
        const ratio = largest / c.total;
        if (ratio > p.max_ratio) findings.add({}, () => `${s.className(id)}: ${c.total} instances, ${ratio.toFixed(1)}× fewer than the largest class`, ratio);
      }
    },
  },
  {
    id: 'rare_classes',
    title: 'Rare classes',
    modality: 'image',
    severity: 'warning',
    description: 'Used classes with fewer than min_instances instances.',
    params: { min_instances: { type: 'integer', default: 10, min: 1, max: 1e9, description: 'Instances a class needs' } },
    message: (n, p) => `${plural(n, 'class')} with fewer than ${p.min_instances} instances`,
    run(s, p, findings) {
      for (const [id, c] of classCounts(s)) {
        if (c.total > 0 && c.total < p.min_instances) findings.add({}, () => `${s.className(id)}: ${c.total} instances`, p.min_instances - c.total);
      }
    },
  },
  {
    id: 'unused_classes',
    title: 'Unused classes',
    modality: 'image',
    severity: 'info',
    description: 'Classes no annotation uses.',
    params: {},
    message: (n) => `${plural(n, 'class')} unused`,
    run(s, _p, findings) {
      for (const [id, c] of classCounts(s)) if (c.total === 0) findings.add({}, () => `${s.className(id)} has no annotations`);
    },
  },
  {
    id: 'class_missing_from_split',
    title: 'Class missing from valid or test',
    modality: 'image',
    severity: 'warning',
    description: 'Classes with instances in train but none in valid or in test (when that split has images): they cannot be measured there.',
    params: {},
    message: (n) => `${plural(n, 'class')} missing from a split`,
    run(s, _p, findings) {
      const splitImages = new Set(s.images.map((i) => i.split));
      for (const [id, c] of classCounts(s)) {
        if (!c.bySplit.train) continue;
        const missing = SPLIT_NAMES.filter((split) => split !== 'train' && splitImages.has(split) && !c.bySplit[split]);
        if (missing.length) findings.add({}, () => `${s.className(id)}: ${c.bySplit.train} in train, none in ${missing.join(' or ')}`);
      }
    },
  },
];
