import type { Db, Executor } from '../db/database.js';

/** An image with the owner of its project: enough to check access and to validate geometry against its size. */
export interface ImageWithOwner {
  id: number;
  project_id: number;
  width: number;
  height: number;
  owner_id: number;
}

/**
 * The image lookup that modules acting on one image (locks, revisions) check access with. It lives below the
 * modules so that none of them imports the images module for it.
 */
export class ImageLookup {
  constructor(private readonly db: Db) {}

  /** The image with its project's owner in one query. */
  findWithOwner(imageId: number, db: Executor = this.db): Promise<ImageWithOwner | undefined> {
    return db
      .selectFrom('images')
      .innerJoin('projects', 'projects.id', 'images.project_id')
      .select(['images.id', 'images.project_id', 'images.width', 'images.height', 'projects.owner_id'])
      .where('images.id', '=', imageId)
      .executeTakeFirst();
  }
}
