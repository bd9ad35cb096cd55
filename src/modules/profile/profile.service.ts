import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { SampleModality } from '../../db/schema.js';
import type { DatasetProfiler } from './dataset-profile.service.js';
import { SAMPLE_MODALITIES, type Modality, type ProfileOut } from './profile.schemas.js';
import type { SampleDataRepository } from './sample-data.repository.js';

/** The modality most of a project's records have: 'image' for a project with images and no samples (or nothing). */
export function projectModality(images: number, samples: Map<SampleModality, number>): Modality {
  let modality: Modality = 'image';
  let most = images;
  for (const m of SAMPLE_MODALITIES) {
    const n = samples.get(m) ?? 0;
    if (n > most) [modality, most] = [m, n];
  }
  return modality;
}

/** `GET /api/projects/{id}/profile`: the kept profile of the whole project, labelled with its main modality. */
export class ProfileService {
  constructor(
    private readonly access: ProjectAccess,
    private readonly profiler: DatasetProfiler,
    private readonly samples: SampleDataRepository,
  ) {}

  /** The profile describes every image and sample: an annotator kept to their assignments gets 403. */
  async profile(caller: Caller, projectId: number): Promise<ProfileOut> {
    const project = await this.access.wholeProject(caller, projectId, 'project.read');
    // The project's counters say whether it holds samples; their modalities take one aggregate.
    const samples = project.sample_count > 0 ? await this.samples.modalityCounts(projectId) : new Map<SampleModality, number>();
    return this.profiler.profile(projectId, projectModality(project.image_count, samples));
  }
}
