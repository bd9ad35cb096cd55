import type { ProfileCache } from './profile-cache.js';
import { HEATMAP_CELLS, type ProfileRepository } from './profile.repository.js';
import type { Modality, ProfileOut } from './quality.schemas.js';
import type { SampleProfiler } from './sample-profile.js';

/** Aspect-ratio buckets (width / height), upper bounds. */
const ASPECT_BUCKETS: [string, number][] = [
  ['< 0.5', 0.5],
  ['0.5–0.8', 0.8],
  ['0.8–1.25', 1.25],
  ['1.25–2', 2],
  ['≥ 2', Infinity],
];
const SIZES_SHOWN = 200;

/**
 * The dataset profile: every section one SQL aggregate (see ProfileRepository), kept per data revision (ProfileCache).
 */
export class ProfileService {
  constructor(
    private readonly repository: ProfileRepository,
    private readonly cache: ProfileCache,
    /** The samples' section (sample-profile.ts), for projects that hold samples. */
    private readonly samples?: SampleProfiler,
  ) {}

  profile(projectId: number, modality: Modality): Promise<ProfileOut> {
    return this.cache.get(projectId, () => this.compute(projectId, modality));
  }

  private async compute(projectId: number, modality: Modality): Promise<ProfileOut> {
    const r = this.repository;
    const [splitRows, classSplits, classes, cells, perImage, sizes] = await Promise.all([
      r.splits(projectId),
      r.classSplits(projectId),
      r.classes(projectId),
      r.annotationCells(projectId),
      r.annotationsPerImage(projectId),
      r.imageSizes(projectId),
    ]);
    const { types: annotationTypes, boxes } = cells;
    const splits: ProfileOut['splits'] = { train: { images: 0, annotated: 0 }, valid: { images: 0, annotated: 0 }, test: { images: 0, annotated: 0 }, unassigned: { images: 0, annotated: 0 } };
    for (const row of splitRows) {
      const s = splits[row.split ?? 'unassigned'] ?? splits.unassigned;
      s.images += row.images;
      s.annotated += row.annotated;
    }
    const byClass = new Map(classes.map((c) => [c.id, { id: c.id, name: c.name, color: c.color, images: 0, instances: 0, instances_by_split: {} as Record<string, number>, images_by_split: {} as Record<string, number> }]));
    for (const row of classSplits) {
      const c = byClass.get(row.class_id);
      if (!c) continue;
      const split = row.split ?? 'unassigned';
      c.instances += row.instances;
      c.images += row.images;
      c.instances_by_split[split] = (c.instances_by_split[split] ?? 0) + row.instances;
      c.images_by_split[split] = (c.images_by_split[split] ?? 0) + row.images;
    }
    const aspects = ASPECT_BUCKETS.map(([bucket]) => ({ bucket, images: 0 }));
    for (const size of sizes) {
      const ratio = size.width / Math.max(1, size.height);
      aspects[ASPECT_BUCKETS.findIndex(([, upper]) => ratio < upper)].images += size.images;
    }
    const boxSizes = { small: 0, medium: 0, large: 0 };
    const counts = Array.from({ length: HEATMAP_CELLS }, () => new Array<number>(HEATMAP_CELLS).fill(0));
    for (const cell of boxes) {
      boxSizes[cell.size] += cell.n;
      counts[cell.cy][cell.cx] += cell.n;
    }
    const images = splitRows.reduce((sum, s) => sum + s.images, 0);
    const samples = await this.samples?.section(projectId);
    return {
      project_id: projectId,
      modality,
      totals: {
        images,
        annotated_images: splitRows.reduce((sum, s) => sum + s.annotated, 0),
        annotations: Object.values(annotationTypes).reduce((sum, n) => sum + n, 0),
        classes: classes.length,
      },
      splits,
      classes: [...byClass.values()],
      annotation_types: annotationTypes,
      annotations_per_image: perImage,
      image_sizes: sizes.slice(0, SIZES_SHOWN),
      aspect_ratios: aspects,
      box_sizes: boxSizes,
      box_heatmap: { cells: HEATMAP_CELLS, counts },
      ...(samples ? { samples } : {}),
    };
  }
}
