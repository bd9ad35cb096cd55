import type { ProjectRevisionsRepository } from './project-revisions.repository.js';
import { ProfileParts } from './profile-parts.service.js';
import type { ProfilePartsRepository } from './profile-parts.repository.js';
import { HEATMAP_CELLS, type ProfileRepository } from './profile.repository.js';
import type { Modality, ProfileOut, SampleProfileOut } from './profile.schemas.js';
import type { SampleProfiler } from './sample-profile.service.js';
import { attributeProfile, keypointProfile, type ProfiledClass } from './shape-profile.logic.js';

/** Aspect-ratio buckets (width / height), upper bounds. */
const ASPECT_BUCKETS: [string, number][] = [
  ['< 0.5', 0.5],
  ['0.5–0.8', 0.8],
  ['0.8–1.25', 1.25],
  ['1.25–2', 2],
  ['≥ 2', Infinity],
];
const SIZES_SHOWN = 200;

/** The project part of a profile: what is not summed over images. */
interface ProjectPart {
  classes: (ProfiledClass & { color: string })[];
  samples: SampleProfileOut | undefined;
}

/**
 * The dataset profile: the sum of its image parts' SQL aggregates (ProfileRepository) and the project part, each part
 * kept per data revision (ProfileParts), so a profile after an edit recomputes the parts the edit touched.
 */
export class DatasetProfiler {
  private readonly parts: ProfileParts<ProjectPart>;

  constructor(
    repository: ProfileRepository,
    revisions: ProjectRevisionsRepository,
    /** The samples' section (sample-profile.service.ts), for projects that hold samples. */
    samples?: SampleProfiler,
    /** Where computed parts outlive the process (none: kept in memory only). */
    store?: ProfilePartsRepository,
  ) {
    this.parts = new ProfileParts(revisions, {
      project: async (projectId) => {
        const [classes, section] = await Promise.all([repository.classes(projectId), samples?.section(projectId)]);
        return { classes, samples: section };
      },
      images: (projectId, first, last) => repository.imageParts(projectId, first, last),
    }, store);
  }

  async profile(projectId: number, modality: Modality): Promise<ProfileOut> {
    const { project, images: parts } = await this.parts.get(projectId);
    const splits: ProfileOut['splits'] = { train: { images: 0, annotated: 0 }, valid: { images: 0, annotated: 0 }, test: { images: 0, annotated: 0 }, unassigned: { images: 0, annotated: 0 } };
    const perImage = new Map<number, number>();
    const byClass = new Map(project.classes.map((c) => [c.id, { id: c.id, name: c.name, color: c.color, images: 0, instances: 0, instances_by_split: {} as Record<string, number>, images_by_split: {} as Record<string, number> }]));
    const annotationTypes: Record<string, number> = {};
    const boxSizes = { small: 0, medium: 0, large: 0 };
    const counts = Array.from({ length: HEATMAP_CELLS }, () => new Array<number>(HEATMAP_CELLS).fill(0));
    const sizes = new Map<string, { width: number; height: number; images: number }>();
    let images = 0;
    let annotated = 0;
    for (const part of parts) {
      for (const row of part.images) {
        const s = splits[row.split ?? 'unassigned'] ?? splits.unassigned;
        s.images += row.images;
        images += row.images;
        if (row.annotations > 0) {
          s.annotated += row.images;
          annotated += row.images;
        }
        perImage.set(row.annotations, (perImage.get(row.annotations) ?? 0) + row.images);
      }
      for (const row of part.classSplits) {
        const c = byClass.get(row.class_id);
        if (!c) continue;
        const split = row.split ?? 'unassigned';
        c.instances += row.instances;
        c.images += row.images;
        c.instances_by_split[split] = (c.instances_by_split[split] ?? 0) + row.instances;
        c.images_by_split[split] = (c.images_by_split[split] ?? 0) + row.images;
      }
      for (const [type, n] of Object.entries(part.types)) annotationTypes[type] = (annotationTypes[type] ?? 0) + n;
      for (const cell of part.boxes) {
        boxSizes[cell.size] += cell.n;
        counts[cell.cy][cell.cx] += cell.n;
      }
      for (const size of part.sizes) {
        const key = `${size.width}x${size.height}`;
        const kept = sizes.get(key);
        if (kept) kept.images += size.images;
        else sizes.set(key, { ...size });
      }
    }
    const aspects = ASPECT_BUCKETS.map(([bucket]) => ({ bucket, images: 0 }));
    for (const size of sizes.values()) {
      const ratio = size.width / Math.max(1, size.height);
      aspects[ASPECT_BUCKETS.findIndex(([, upper]) => ratio < upper)].images += size.images;
    }
    const imageSizes = [...sizes.values()].sort((a, b) => b.images - a.images || a.width - b.width || a.height - b.height);
    return {
      project_id: projectId,
      modality,
      totals: {
        images,
        annotated_images: annotated,
        annotations: Object.values(annotationTypes).reduce((sum, n) => sum + n, 0),
        classes: project.classes.length,
      },
      splits,
      classes: [...byClass.values()],
      annotation_types: annotationTypes,
      attributes: attributeProfile(project.classes, parts),
      keypoints: keypointProfile(project.classes, parts),
      annotations_per_image: [...perImage].sort(([a], [b]) => a - b).map(([annotations, n]) => ({ annotations, images: n })),
      image_sizes: imageSizes.slice(0, SIZES_SHOWN),
      aspect_ratios: aspects,
      box_sizes: boxSizes,
      box_heatmap: { cells: HEATMAP_CELLS, counts },
      ...(project.samples ? { samples: project.samples } : {}),
    };
  }
}
