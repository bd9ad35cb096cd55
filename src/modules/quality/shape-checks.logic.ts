/**
 * The image modality's checks of the shapes of issue 25 (keypoints, rotated boxes, ellipses, polylines, polygon
 * holes): what the annotations API stores but a trainer or an export cannot use. They read the snapshot's shape
 * notes (ShapeNote), kept only for the shapes that have something to report.
 */
import type { CheckDefinition, Findings } from './check-catalog.logic.js';
import { ANNOTATION_TYPES, insideImage } from '../../imaging/geometry.js';
import type { DatasetSnapshot, ShapeNote } from './dataset-snapshot.logic.js';

type ShapeCheck = CheckDefinition<DatasetSnapshot>;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const type = (name: (typeof ANNOTATION_TYPES)[number]) => ANNOTATION_TYPES.indexOf(name);
const KEYPOINTS = type('keypoints');
const BBOX = type('bbox');
const ELLIPSE = type('ellipse');

/** Each annotation of `types` (all when empty) with its image, its index and its note. */
function eachShape(s: DatasetSnapshot, types: number[], fn: (k: number, image: DatasetSnapshot['images'][number], note: ShapeNote | undefined) => void): void {
  const a = s.annotations;
  for (let k = 0; k < a.length; k++) if (types.includes(a.type[k])) fn(k, s.images[a.image[k]], a.notes.get(k));
}

/** Skeleton point names of an annotation's class by index (`#i` when the class has none or fewer). */
const pointName = (s: DatasetSnapshot, classId: number, i: number) => s.skeletons.get(classId)?.[i] ?? `#${i}`;

export const SHAPE_CHECKS: ShapeCheck[] = [
  {
    id: 'keypoints_outside_box',
    title: 'Keypoints outside their box',
    modality: 'image',
    severity: 'error',
    description: "Keypoint instances with a box and a labelled point more than tolerance pixels outside it: the point or the box is wrong (pose trainers and COCO's OKS read both).",
    params: { tolerance: { type: 'number', default: 1, min: 0, max: 10_000, description: 'Pixels a labelled point may lie beyond its box' } },
    message: (n) => `${plural(n, 'keypoint instance')} with points outside their box`,
    run(s, p, findings) {
      const a = s.annotations;
      eachShape(s, [KEYPOINTS], (k, image, note) => {
        const out = (note?.beyondBox ?? []).filter(([, d]) => d > p.tolerance);
        if (out.length === 0) return;
        const worst = Math.max(...out.map(([, d]) => d));
        findings.add(
          { image_id: image.id, annotation_id: a.id[k] },
          () => `${s.className(a.classId[k])}: ${out.map(([i, d]) => `${pointName(s, a.classId[k], i)} ${d.toFixed(1)} px`).join(', ')} outside the box: move the points or widen the box`,
          worst,
        );
      });
    },
  },
  {
    id: 'skeleton_mismatch',
    title: 'Keypoints that do not fit their skeleton',
    modality: 'image',
    severity: 'error',
    description: "Keypoint instances whose class has no skeleton, or whose point count differs from the class skeleton's: no export or trainer can name their points.",
    params: {},
    message: (n) => `${plural(n, 'keypoint instance')} not fitting their class's skeleton`,
    run(s, _p, findings) {
      const a = s.annotations;
      eachShape(s, [KEYPOINTS], (k, image) => {
        const skeleton = s.skeletons.get(a.classId[k]);
        const name = s.className(a.classId[k]);
        if (!skeleton) {
          findings.add({ image_id: image.id, annotation_id: a.id[k] }, () => `${name} has no skeleton: give the class one (points, edges, flip_pairs) with ${a.points[k]} points`);
        } else if (skeleton.length !== a.points[k]) {
          findings.add(
            { image_id: image.id, annotation_id: a.id[k] },
            () => `${plural(a.points[k], 'point')}; ${name}'s skeleton has ${skeleton.length}: redraw the instance from the template or move it to its class`,
          );
        }
      });
    },
  },
  {
    id: 'missing_keypoints',
    title: 'Skeleton points not labelled',
    modality: 'image',
    severity: 'info',
    description: 'Keypoint instances with at least min_missing points not labelled (v = 0). Normal for points out of sight; many of them usually mean unfinished work. Ranked by how many.',
    params: { min_missing: { type: 'integer', default: 1, min: 1, max: 1000, description: 'Unlabelled points from which an instance is listed' } },
    message: (n, p) => `${plural(n, 'keypoint instance')} with ${p.min_missing === 1 ? 'a point' : `${p.min_missing} or more points`} not labelled`,
    run(s, p, findings) {
      const a = s.annotations;
      eachShape(s, [KEYPOINTS], (k, image, note) => {
        const missing = note?.unlabelled ?? [];
        if (missing.length < p.min_missing) return;
        findings.add(
          { image_id: image.id, annotation_id: a.id[k] },
          () => `${s.className(a.classId[k])}: ${missing.length} of ${a.points[k]} not labelled (${missing.map((i) => pointName(s, a.classId[k], i)).join(', ')}): label them, or mark them occluded (v 1) where they are hidden`,
          missing.length,
        );
      });
    },
  },
  {
    id: 'collapsed_shapes',
    title: 'Collapsed rotated boxes, ellipses and polylines',
    modality: 'image',
    severity: 'error',
    description: 'Rotated boxes under a pixel wide or high, ellipses under a pixel across, boxes and ellipses whose centre lies off the image, and polylines with fewer than 2 distinct points: nothing a trainer can learn or an export can draw.',
    params: {},
    message: (n) => `${plural(n, 'shape')} collapsed or off the image`,
    run(s, _p, findings) {
      const a = s.annotations;
      const polyline = type('polyline');
      eachShape(s, [BBOX, ELLIPSE, polyline], (k, image, note) => {
        const item = { image_id: image.id, annotation_id: a.id[k] };
        const shape = a.type[k] === BBOX ? 'Rotated box' : a.type[k] === ELLIPSE ? 'Ellipse' : 'Polyline';
        if (note?.distinct !== undefined) {
          findings.add(item, () => `Polyline with ${plural(note.distinct!, 'distinct point')}: draw it again, or make it a point`);
        } else if (note?.across !== undefined) {
          findings.add(item, () => `${shape} ${note.across!.toFixed(2)} px across: delete it or draw it again`, 1 - note.across!);
        } else if (a.type[k] !== polyline && !insideImage([a.x[k] + a.w[k] / 2, a.y[k] + a.h[k] / 2], image)) {
          findings.add(item, () => `${a.type[k] === BBOX ? 'Box' : 'Ellipse'} centred off the ${image.width}×${image.height} image: move it onto the image or delete it`);
        }
      });
    },
  },
  {
    id: 'holes_outside_parts',
    title: 'Polygon holes outside their object',
    modality: 'image',
    severity: 'warning',
    description: "Holes of a polygon object reaching more than half a pixel outside every part of it: the object's area and mask are wrong.",
    params: {},
    message: (n) => `${plural(n, 'polygon')} with holes outside their parts`,
    run(s, _p, findings) {
      const a = s.annotations;
      eachShape(s, [type('polygon')], (k, image, note) => {
        if (!note?.strayHoles) return;
        findings.add(
          { image_id: image.id, annotation_id: a.id[k] },
          () => `${s.className(a.classId[k])}: ${note.strayHoles!.length === 1 ? 'hole' : 'holes'} ${note.strayHoles!.map((h) => h + 1).join(', ')} outside the object's parts: move ${note.strayHoles!.length === 1 ? 'it' : 'them'} inside or delete ${note.strayHoles!.length === 1 ? 'it' : 'them'}`,
        );
      });
    },
  },
];
