import type { Insertable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ExportsTable, VersionsTable } from '../../db/schema.js';
import type { ExportRow } from './exports.schemas.js';

/** An image row as the export reads it: enough to name, size and open it. */
export interface ExportImageRow {
  id: number;
  filename: string;
  width: number;
  height: number;
  split: string | null;
  blob_key: string;
}

export interface ExportAnnotationRow {
  image_id: number;
  class_name: string;
  annotation_type: string;
  geometry: string;
}

export interface PageCursor {
  after: number;
  limit: number;
  annotatedOnly: boolean;
}

export class ExportsRepository {
  constructor(private readonly db: Db) {}

  insert(values: Insertable<ExportsTable>): Promise<ExportRow> {
    return this.db.insertInto('exports').values(values).returningAll().executeTakeFirstOrThrow();
  }

  findByFilename(filename: string): Promise<(ExportRow & { owner_id: number }) | undefined> {
    return this.db
      .selectFrom('exports')
      .innerJoin('projects', 'projects.id', 'exports.project_id')
      .selectAll('exports')
      .select('projects.owner_id')
      .where('exports.filename', '=', filename)
      .executeTakeFirst();
  }

  /** Class names in creation order, which is the order exports number them in. */
  async projectClasses(projectId: number): Promise<{ id: number; name: string }[]> {
    return this.db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).orderBy('id').execute();
  }

  /** One page of a project's images in id order, after the cursor (keyset on the (project_id, id) index). */
  projectImages(projectId: number, page: PageCursor): Promise<ExportImageRow[]> {
    let query = this.db
      .selectFrom('images')
      .select(['id', 'filename', 'width', 'height', 'split', 'blob_key'])
      .where('project_id', '=', projectId)
      .where('id', '>', page.after);
    if (page.annotatedOnly) query = query.where('annotation_count', '>', 0);
    return query.orderBy('id').limit(page.limit).execute();
  }

  /** The annotations of some images of the project, in image then id order, with their class names. */
  projectAnnotations(projectId: number, imageIds: number[]): Promise<ExportAnnotationRow[]> {
    if (imageIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('annotations')
      .innerJoin('classes', 'classes.id', 'annotations.class_id')
      .select(['annotations.image_id', 'classes.name as class_name', 'annotations.annotation_type', 'annotations.geometry'])
      .where('annotations.project_id', '=', projectId)
      .where('annotations.image_id', 'in', imageIds)
      .orderBy('annotations.image_id')
      .orderBy('annotations.id')
      .execute();
  }

  findVersion(versionId: number): Promise<Pick<VersionsTable, 'project_id' | 'number' | 'status'> & { id: number } | undefined> {
    return this.db.selectFrom('versions').select(['id', 'project_id', 'number', 'status']).where('id', '=', versionId).executeTakeFirst();
  }

  async versionClasses(versionId: number): Promise<string[]> {
    const rows = await this.db.selectFrom('version_classes').select('name').where('version_id', '=', versionId).orderBy('index').execute();
    return rows.map((r) => r.name);
  }

  /** One page of a version's images of one split (keyset on the (version_id, split, id) index). */
  versionImages(versionId: number, split: string, page: PageCursor): Promise<ExportImageRow[]> {
    let query = this.db
      .selectFrom('version_images')
      .select(['id', 'filename', 'width', 'height', 'split', 'blob_key'])
      .where('version_id', '=', versionId)
      .where('split', '=', split)
      .where('id', '>', page.after);
    if (page.annotatedOnly) {
      query = query.where((eb) => eb.exists(eb.selectFrom('version_annotations').select('id').whereRef('version_image_id', '=', 'version_images.id')));
    }
    return query.orderBy('id').limit(page.limit).execute();
  }

  versionAnnotations(imageIds: number[]): Promise<ExportAnnotationRow[]> {
    if (imageIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('version_annotations')
      .select(['version_image_id as image_id', 'class_name', 'annotation_type', 'geometry'])
      .where('version_image_id', 'in', imageIds)
      .orderBy('version_image_id')
      .orderBy('id')
      .execute();
  }

  /** Whether an export references the version (the versions module refuses to delete it then). */
  async versionInUse(versionId: number): Promise<boolean> {
    return (await this.db.selectFrom('exports').select('id').where('version_id', '=', versionId).limit(1).executeTakeFirst()) !== undefined;
  }
}
