import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { SampleModality } from '../../db/schema.js';
import type { ReadinessOut } from '../../training/readiness.js';
import type { DatasetProfiler } from '../profile/dataset-profile.service.js';
import type { SampleDataRepository } from '../profile/sample-data.repository.js';
import { ADAPTER_TASKS, DEFAULT_ADAPTER, evaluateReadiness, SAMPLE_TASKS, TASK_OF_PROJECT, UNTRAINED_TASKS, type ReadinessStats, type SampleReadinessStats } from './readiness-rules.logic.js';
import type { ReadinessConfig } from './readiness.schemas.js';

/** The facts of a project the rules read, gathered by SQL aggregates; the service the training gate is handed. */
export class ReadinessEvaluator {
  constructor(
    private readonly access: ProjectAccess,
    /** The image statistics come from the project's kept profile. */
    private readonly profiles: DatasetProfiler,
    private readonly samples: SampleDataRepository,
  ) {}

  async evaluate(caller: Caller, projectId: number, input: { adapter?: string; config?: ReadinessConfig } = {}): Promise<ReadinessOut> {
    // Per-class counts of the whole project: an annotator kept to their assignments gets 403, as for the profile.
    const project = await this.access.wholeProject(caller, projectId, 'project.read');
    const untrained = TASK_OF_PROJECT[project.project_type];
    // A project type no adapter trains yet (keypoint or oriented detection) is judged by its own rule, which blocks.
    const adapter = input.adapter ?? (await this.sampleAdapter(projectId, project)) ?? DEFAULT_ADAPTER[project.project_type] ?? (untrained && UNTRAINED_TASKS[untrained] ? 'none' : 'versa-detect');
    const task = (adapter === 'none' ? untrained : ADAPTER_TASKS[adapter]) ?? TASK_OF_PROJECT[project.project_type] ?? 'detect';
    const modality = SAMPLE_TASKS[task];
    // A sample adapter reads samples only: the image aggregates are not asked for.
    const stats: ReadinessStats = modality
      ? { images: 0, splits: { train: 0, valid: 0, test: 0, unassigned: 0 }, annotatedImages: 0, annotationTypes: {}, classes: [], samples: await this.sampleStats(projectId, modality) }
      : await this.stats(projectId);
    return evaluateReadiness(task, adapter, stats, input.config);
  }

  /** A project with samples and no images is judged for the adapter of its largest sample modality (tabular or text). */
  private async sampleAdapter(projectId: number, project: { image_count: number; sample_count: number }): Promise<string | undefined> {
    if (project.image_count > 0 || project.sample_count === 0) return undefined;
    const counts = [...(await this.samples.modalityCounts(projectId))].filter(([m]) => m === 'tabular' || m === 'text').sort((a, b) => b[1] - a[1]);
    return counts[0]?.[0];
  }

  private async sampleStats(projectId: number, modality: SampleModality): Promise<SampleReadinessStats> {
    const [splitRows, labelRows, layout, values] = await Promise.all([
      this.samples.splitCounts(projectId, modality),
      this.samples.labelCounts(projectId, modality),
      modality === 'tabular' ? this.samples.tabularLayout(projectId) : undefined,
      this.samples.numericValues(projectId, modality),
    ]);
    const splits = { train: 0, valid: 0, test: 0, unassigned: 0 };
    let samples = 0;
    let labelled = 0;
    for (const row of splitRows) {
      splits[row.split === 'train' || row.split === 'valid' || row.split === 'test' ? row.split : 'unassigned'] += row.samples;
      samples += row.samples;
      labelled += row.labelled;
    }
    const classes = new Map<string, number>();
    for (const row of labelRows) classes.set(row.label, (classes.get(row.label) ?? 0) + row.samples);
    return {
      modality,
      samples,
      splits,
      labelled,
      classes: [...classes].map(([name, n]) => ({ name, samples: n })),
      target: layout && { name: layout.target, task: layout.task },
      numbers: values.numbers,
      distinctNumbers: values.distinct,
    };
  }

  private async stats(projectId: number): Promise<ReadinessStats> {
    const profile = await this.profiles.profile(projectId, 'image');
    const split = (name: string) => profile.splits[name]?.images ?? 0;
    return {
      images: profile.totals.images,
      splits: { train: split('train'), valid: split('valid'), test: split('test'), unassigned: split('unassigned') },
      annotatedImages: profile.totals.annotated_images,
      annotationTypes: profile.annotation_types,
      classes: profile.classes
        .filter((c) => c.instances > 0)
        .map((c) => ({ name: c.name, instances: c.instances_by_split, images: c.images_by_split, totalInstances: c.instances, totalImages: c.images })),
    };
  }
}
