/**
 * The cleaning catalog. Each action plans its changes from the same snapshot the checks read; a plan is the exact
 * list the preview shows and the apply executes. Actions run in the order given: an image or annotation an earlier
 * action deletes is left alone by later ones, and two updates of one annotation merge (class from one, geometry from
 * the other).
 */
import { ValidationError } from '../../http/errors.js';
import { resolveParams, type CatalogEntry, type ParamSpecs, type ParamValues } from '../quality/check-catalog.logic.js';
import { iou, type DatasetSnapshot } from '../quality/dataset-snapshot.logic.js';
import { MAX_NEAR_DISTANCE } from '../quality/near-duplicates.logic.js';
import type { Modality } from '../profile/profile.schemas.js';
import type { ChangeKind } from './cleaning.schemas.js';
import { SPLIT_NAMES } from '../../lib/vocabulary.js';

export interface PlannedChange {
  action: string;
  kind: ChangeKind;
  image_id?: number;
  annotation_id?: number;
  class_id?: number;
  detail: string;
  /** What the change sets. */
  set?: { split?: string; review_state?: string; class_id?: number; geometry?: unknown; name?: string };
}

/** What an action may look up beyond the snapshot (full geometries of the few shapes it reshapes). */
export interface PlanLookups {
  geometries(annotationIds: number[]): Promise<Map<number, { annotation_type: string; geometry: string }>>;
}

export interface CleaningActionDefinition extends CatalogEntry {
  /** Extra checks of the params against the project (class ids exist, …); throws ValidationError. */
  validate?(snapshot: DatasetSnapshot, params: ParamValues, loc: (string | number)[]): void;
  plan(snapshot: DatasetSnapshot, params: ParamValues, plan: Plan, lookups: PlanLookups): void | Promise<void>;
}


/** The changes of one request, with the bookkeeping that keeps actions from contradicting each other. */
export class Plan {
  readonly changes: PlannedChange[] = [];
  readonly deletedImages = new Set<number>();
  readonly deletedAnnotations = new Set<number>();
  private readonly updates = new Map<number, PlannedChange>();
  private readonly imageSets = new Map<number, PlannedChange>();
  action = '';

  constructor(private readonly snapshot: DatasetSnapshot) {}

  deleteImage(imageIndex: number, detail: string): void {
    const image = this.snapshot.images[imageIndex];
    if (this.deletedImages.has(image.id)) return;
    this.deletedImages.add(image.id);
    this.changes.push({ action: this.action, kind: 'delete_image', image_id: image.id, detail });
  }

  deleteAnnotation(k: number, detail: string): void {
    const a = this.snapshot.annotations;
    const imageId = this.snapshot.images[a.image[k]].id;
    if (this.deletedImages.has(imageId) || this.deletedAnnotations.has(a.id[k])) return;
    this.deletedAnnotations.add(a.id[k]);
    this.changes.push({ action: this.action, kind: 'delete_annotation', image_id: imageId, annotation_id: a.id[k], detail });
  }

  updateAnnotation(k: number, set: { class_id?: number; geometry?: unknown }, detail: string): void {
    const a = this.snapshot.annotations;
    const imageId = this.snapshot.images[a.image[k]].id;
    if (this.deletedImages.has(imageId) || this.deletedAnnotations.has(a.id[k])) return;
    const earlier = this.updates.get(a.id[k]);
    if (earlier) {
      earlier.set = { ...earlier.set, ...set };
      earlier.detail = `${earlier.detail}; ${detail}`;
      return;
    }
    const change: PlannedChange = { action: this.action, kind: 'update_annotation', image_id: imageId, annotation_id: a.id[k], detail, set };
    this.updates.set(a.id[k], change);
    this.changes.push(change);
  }

  setImage(imageIndex: number, kind: 'move_image' | 'mark_image', set: { split?: string; review_state?: string }, detail: string): void {
    const image = this.snapshot.images[imageIndex];
    if (this.deletedImages.has(image.id)) return;
    const earlier = this.imageSets.get(image.id);
    if (earlier) {
      earlier.set = { ...earlier.set, ...set };
      earlier.detail = `${earlier.detail}; ${detail}`;
      return;
    }
    const change: PlannedChange = { action: this.action, kind, image_id: image.id, detail, set };
    this.imageSets.set(image.id, change);
    this.changes.push(change);
  }

  classChange(kind: 'delete_class' | 'rename_class', classId: number, detail: string, set?: { name: string }): void {
    this.changes.push({ action: this.action, kind, class_id: classId, detail, ...(set ? { set } : {}) });
  }

  /** Later actions skip what earlier ones deleted; changes to deleted images drop out at the end. */
  finish(): PlannedChange[] {
    return this.changes.filter((c) => c.kind === 'delete_image' || c.image_id === undefined || !this.deletedImages.has(c.image_id));
  }
}

const distance = { type: 'integer', default: 8, min: 0, max: MAX_NEAR_DISTANCE, description: 'Most dHash bits (of 64) two near duplicates differ in' } as const;

/** Which image of a duplicate group stays: the most annotated, then the oldest. */
function keeper(s: DatasetSnapshot, group: number[]): number {
  return group.reduce((best, i) => (s.images[i].annotation_count > s.images[best].annotation_count ? i : best), group[0]);
}

function classIdParam(s: DatasetSnapshot, id: unknown, loc: (string | number)[]): void {
  if (typeof id !== 'number' || !s.classes.has(id)) throw ValidationError.at(loc, `Class ${String(id)} is not a class of this project; valid: ${[...s.classes.keys()].join(', ')}`);
}

export const IMAGE_CLEANING_ACTIONS: CleaningActionDefinition[] = [
  {
    id: 'remove_exact_duplicates',
    title: 'Remove exact duplicates',
    modality: 'image',
    description: 'Deletes every image whose pixels equal another\'s, keeping one per group (the most annotated, then the oldest).',
    params: {},
    plan(s, _p, plan) {
      for (const group of s.exactDuplicateGroups()) {
        const keep = keeper(s, group);
        for (const i of group) if (i !== keep) plan.deleteImage(i, `Same pixels as image ${s.images[keep].id}, which is kept`);
      }
    },
  },
  {
    id: 'remove_near_duplicates',
    title: 'Remove near duplicates',
    modality: 'image',
    description: 'Deletes every image of a near-duplicate group but one (the most annotated, then the oldest).',
    params: { max_distance: distance },
    plan(s, p, plan) {
      for (const group of s.nearDuplicateGroups(p.max_distance)) {
        const keep = keeper(s, group);
        for (const i of group) if (i !== keep) plan.deleteImage(i, `Near duplicate of image ${s.images[keep].id}, which is kept`);
      }
    },
  },
  {
    id: 'fix_split_leakage',
    title: 'Move near-duplicate groups into one split',
    modality: 'image',
    description: 'Moves every image of a near-duplicate group spanning splits into the split most of the group is in (ties: train, valid, test).',
    params: { max_distance: distance },
    plan(s, p, plan) {
      for (const group of s.nearDuplicateGroups(p.max_distance)) {
        const counts = new Map<string, number>();
        for (const i of group) if (s.images[i].split) counts.set(s.images[i].split!, (counts.get(s.images[i].split!) ?? 0) + 1);
        if (counts.size < 2) continue;
        const target = SPLIT_NAMES.filter((x) => counts.has(x)).reduce((a, b) => (counts.get(b)! > counts.get(a)! ? b : a));
        for (const i of group) {
          if (s.images[i].split !== target) plan.setImage(i, 'move_image', { split: target }, `${s.images[i].split ?? 'no split'} → ${target} (group of ${group.length})`);
        }
      }
    },
  },
  {
    id: 'drop_tiny_annotations',
    title: 'Drop tiny annotations',
    modality: 'image',
    description: 'Deletes shapes with a side below min_side or an area below min_area pixels, and polygons with fewer than 3 points.',
    params: {
      min_side: { type: 'number', default: 2, min: 0, max: 10_000, description: 'Smallest kept box side, in pixels' },
      min_area: { type: 'number', default: 16, min: 0, max: 1e8, description: 'Smallest kept area, in square pixels' },
    },
    plan(s, p, plan) {
      const a = s.annotations;
      for (let k = 0; k < a.length; k++) {
        if (!a.spatial(k)) continue;
        if ((a.type[k] === 1 && a.points[k] < 3) || Math.min(a.w[k], a.h[k]) < p.min_side || a.area[k] < p.min_area) {
          plan.deleteAnnotation(k, `${s.className(a.classId[k])} ${Math.round(a.w[k] * 10) / 10}×${Math.round(a.h[k] * 10) / 10} px`);
        }
      }
    },
  },
  {
    id: 'merge_duplicate_boxes',
    title: 'Merge duplicate boxes',
    modality: 'image',
    description: 'Of two shapes of the same class on one image with IoU ≥ min_iou, keeps the older and deletes the newer.',
    params: { min_iou: { type: 'number', default: 0.9, min: 0.01, max: 1, description: 'IoU from which two same-class shapes are duplicates' } },
    plan(s, p, plan) {
      const a = s.annotations;
      s.forEachImage((_i, from, to) => {
        for (let x = from; x < to; x++) {
          const i = s.order[x];
          if (!a.spatial(i) || plan.deletedAnnotations.has(a.id[i])) continue;
          for (let y = x + 1; y < to; y++) {
            const j = s.order[y];
            if (!a.spatial(j) || a.classId[i] !== a.classId[j] || plan.deletedAnnotations.has(a.id[j])) continue;
            const v = iou(a, i, j);
            if (v >= p.min_iou) plan.deleteAnnotation(j, `Duplicate of annotation ${a.id[i]} (IoU ${v.toFixed(2)}), which is kept`);
          }
        }
      });
    },
  },
  {
    id: 'clip_annotations',
    title: 'Clip annotations to the image',
    modality: 'image',
    description: 'Clips boxes and polygon points to the image border; a shape with nothing left inside is deleted. Masks are left as they are.',
    params: {},
    async plan(s, _p, plan, lookups) {
      const a = s.annotations;
      const outside: number[] = [];
      for (let k = 0; k < a.length; k++) {
        if (a.type[k] > 1) continue;
        const image = s.images[a.image[k]];
        if (a.x[k] < 0 || a.y[k] < 0 || a.x[k] + a.w[k] > image.width || a.y[k] + a.h[k] > image.height) outside.push(k);
      }
      const polygons = await lookups.geometries(outside.filter((k) => a.type[k] === 1).map((k) => a.id[k]));
      for (const k of outside) {
        const image = s.images[a.image[k]];
        const cx = (v: number) => Math.min(Math.max(v, 0), image.width);
        const cy = (v: number) => Math.min(Math.max(v, 0), image.height);
        if (a.type[k] === 0) {
          const x0 = cx(a.x[k]);
          const y0 = cy(a.y[k]);
          const x1 = cx(a.x[k] + a.w[k]);
          const y1 = cy(a.y[k] + a.h[k]);
          if (x1 - x0 <= 0 || y1 - y0 <= 0) plan.deleteAnnotation(k, 'Entirely outside the image');
          else plan.updateAnnotation(k, { geometry: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } }, `Clipped to ${Math.round(x1 - x0)}×${Math.round(y1 - y0)} px inside the image`);
        } else {
          const row = polygons.get(a.id[k]);
          if (!row) continue;
          const points = (JSON.parse(row.geometry).points as number[][]).map(([x, y]) => [cx(x), cy(y)]);
          const xs = points.map((pt) => pt[0]);
          const ys = points.map((pt) => pt[1]);
          if (Math.max(...xs) - Math.min(...xs) <= 0 || Math.max(...ys) - Math.min(...ys) <= 0) plan.deleteAnnotation(k, 'Entirely outside the image');
          else plan.updateAnnotation(k, { geometry: { points } }, 'Polygon points clipped to the image');
        }
      }
    },
  },
  {
    id: 'remove_unannotated_images',
    title: 'Remove or mark unannotated images',
    modality: 'image',
    description: 'Images with no annotation: `delete` deletes them; `mark` sets their review state to `changes` so they show up as needing work.',
    params: { mode: { type: 'string', default: 'mark', enum: ['delete', 'mark'], description: 'delete or mark' } },
    plan(s, p, plan) {
      s.forEachImage((i, from, to) => {
        if (from !== to) return;
        if (p.mode === 'delete') plan.deleteImage(i, 'No annotations');
        else plan.setImage(i, 'mark_image', { review_state: 'changes' }, 'No annotations: marked as needing changes');
      });
    },
  },
  {
    id: 'merge_classes',
    title: 'Merge classes',
    modality: 'image',
    description: 'Moves every annotation of the `from` classes to the `into` class, then deletes the `from` classes.',
    params: {
      from: { type: 'integer[]', default: [], description: 'Class ids merged away' },
      into: { type: 'integer', default: 0, min: 1, max: 2_147_483_647, description: 'Class id that receives their annotations' },
    },
    validate(s, p, loc) {
      if ((p.from as number[]).length === 0) throw ValidationError.at([...loc, 'from'], 'Name at least one class to merge');
      (p.from as number[]).forEach((id, i) => classIdParam(s, id, [...loc, 'from', i]));
      classIdParam(s, p.into, [...loc, 'into']);
      if ((p.from as number[]).includes(p.into)) throw ValidationError.at([...loc, 'from'], '`into` cannot also be merged away');
    },
    plan(s, p, plan) {
      const from = new Set(p.from as number[]);
      const a = s.annotations;
      const into = s.className(p.into);
      for (let k = 0; k < a.length; k++) if (from.has(a.classId[k])) plan.updateAnnotation(k, { class_id: p.into }, `${s.className(a.classId[k])} → ${into}`);
      for (const id of from) plan.classChange('delete_class', id, `${s.className(id)} merged into ${into}`);
    },
  },
  {
    id: 'rename_class',
    title: 'Rename a class',
    modality: 'image',
    description: 'Gives a class a new name (unique in the project: an existing name is 409 at apply).',
    params: {
      class_id: { type: 'integer', default: 0, min: 1, max: 2_147_483_647, description: 'The class to rename' },
      name: { type: 'string', default: '', max: 100, description: 'Its new name' },
    },
    validate(s, p, loc) {
      classIdParam(s, p.class_id, [...loc, 'class_id']);
      if (!(p.name as string).trim()) throw ValidationError.at([...loc, 'name'], 'A new name is required');
    },
    plan(s, p, plan) {
      plan.classChange('rename_class', p.class_id, `${s.className(p.class_id)} → ${(p.name as string).trim()}`, { name: (p.name as string).trim() });
    },
  },
  {
    id: 'delete_unreadable_images',
    title: 'Delete unreadable images',
    modality: 'image',
    description: 'Deletes images whose file cannot be decoded or is truncated.',
    params: {},
    plan(s, _p, plan) {
      s.images.forEach((image, i) => {
        if (image.readable === 0) plan.deleteImage(i, 'Cannot be decoded');
        else if (image.truncated === 1) plan.deleteImage(i, 'Truncated file');
      });
    },
  },
];

const actions = new Map<Modality, Map<string, CleaningActionDefinition>>();

export function registerCleaningActions(modality: Modality, definitions: readonly CleaningActionDefinition[]): void {
  const entries = actions.get(modality) ?? new Map();
  for (const d of definitions) entries.set(d.id, d);
  actions.set(modality, entries);
}

export function cleaningActionsOf(modality?: Modality): CleaningActionDefinition[] {
  if (modality) return [...(actions.get(modality)?.values() ?? [])];
  return [...actions.values()].flatMap((m) => [...m.values()]);
}

export function cleaningCatalog(modality?: Modality) {
  return cleaningActionsOf(modality).map((a) => ({ id: a.id, title: a.title, modality: a.modality, description: a.description, params: a.params as ParamSpecs }));
}

registerCleaningActions('image', IMAGE_CLEANING_ACTIONS);

export { resolveParams };
