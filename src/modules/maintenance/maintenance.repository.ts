import type { Db } from '../../db/database.js';
import { projectBlobPrefix } from '../../storage/keys.js';

/** What the sweep asks the database: which projects, versions and stored files have rows. */
export class MaintenanceRepository {
  constructor(private readonly db: Db) {}

  async projectExists(projectId: number): Promise<boolean> {
    return (await this.db.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst()) !== undefined;
  }

  async versionNumbers(projectId: number): Promise<Set<number>> {
    const rows = await this.db.selectFrom('versions').select('number').where('project_id', '=', projectId).execute();
    return new Set(rows.map((row) => Number(row.number)));
  }

  /** Every blob key a row of the project refers to (images, thumbnails, sources kept by versions, models, exports). */
  async referencedKeys(projectId: number): Promise<{ keys: Set<string>; shas: Set<string> }> {
    const keys = new Set<string>();
    const shas = new Set<string>();
    const images = await this.db.selectFrom('images').select(['blob_key', 'thumbnail_key', 'sha256']).where('project_id', '=', projectId).execute();
    // An import into an existing project keeps its rows under a hidden (importing) staging project until it moves
    // them here, while their files are already stored under this project's keys.
    const staged = await this.db
      .selectFrom('images')
      .innerJoin('projects', 'projects.id', 'images.project_id')
      .select(['images.blob_key', 'images.thumbnail_key', 'images.sha256'])
      .where('projects.status', '=', 'importing')
      .where('projects.id', '!=', projectId)
      .where('images.blob_key', 'like', `${projectBlobPrefix(projectId)}/%`)
      .execute();
    for (const row of [...images, ...staged]) {
      keys.add(row.blob_key);
      keys.add(row.thumbnail_key);
      shas.add(row.sha256);
    }
    const sources = await this.db
      .selectFrom('version_sources')
      .innerJoin('versions', 'versions.id', 'version_sources.version_id')
      .select(['version_sources.blob_key', 'version_sources.sha256'])
      .where('versions.project_id', '=', projectId)
      .execute();
    for (const row of sources) {
      keys.add(row.blob_key);
      shas.add(row.sha256);
    }
    for (const row of await this.db.selectFrom('models').select(['blob_key', 'checkpoint_key']).where('project_id', '=', projectId).execute()) {
      for (const key of [row.blob_key, row.checkpoint_key]) if (key) keys.add(key);
    }
    for (const row of await this.db.selectFrom('exports').select('blob_key').where('project_id', '=', projectId).execute()) keys.add(row.blob_key);
    return { keys, shas };
  }
}
