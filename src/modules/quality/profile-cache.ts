import type { ProjectRevisionsRepository } from './project-revisions.repository.js';
import type { ProfileOut } from './quality.schemas.js';

/** Projects whose last profile is kept. */
const CAPACITY = 32;

/**
 * The last profile of recently viewed projects, each kept with the data revision it was computed at and handed out
 * while that revision is still the current one: a profile of a million annotations takes seconds to aggregate, and
 * the Health tab asks for it on every visit. A profile is kept only when the revision read before computing it is
 * the one read after (no commit touched the project meanwhile), so a kept profile is exactly the data of its
 * revision.
 */
export class ProfileCache {
  private readonly entries = new Map<number, { revision: number; profile: ProfileOut }>();

  constructor(private readonly revisions: ProjectRevisionsRepository) {}

  async get(projectId: number, compute: () => Promise<ProfileOut>): Promise<ProfileOut> {
    const revision = await this.revisions.current(projectId);
    const kept = this.entries.get(projectId);
    this.entries.delete(projectId);
    if (kept?.revision === revision) {
      this.entries.set(projectId, kept);
      return kept.profile;
    }
    const profile = await compute();
    if ((await this.revisions.current(projectId)) === revision) {
      this.entries.set(projectId, { revision, profile });
      if (this.entries.size > CAPACITY) this.entries.delete(this.entries.keys().next().value!);
    }
    return profile;
  }
}
