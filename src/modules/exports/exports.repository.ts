import type { Insertable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ExportsTable, VersionsTable } from '../../db/schema.js';
import type { ExportRow } from './exports.schemas.js';
import { projectTracks } from '../tracks/tracks.repository.js';

/** An image row as the export reads it: enough to name, size and open it. */
export interface ExportImageRow {
  id: number;
  filename: string;
  width: number;
  height: number;
  split: string | null;
  blob_key: string;
  /** The video the image is a frame of, and its frame number (project exports; null for other images). */
  video_id?: number | null;
  frame?: number | null;
}

export interface ExportAnnotationRow {
  id: number;
  image_id: number;
  class_name: string;
  annotation_type: string;
  geometry: string;
  /** JSON text of attribute values, null when none (version rows before they kept attributes: absent). */
  attributes?: string | null;
  group_id?: number | null;
}

export interface PageCursor {
  after: number;
  limit: number;
  annotatedOnly: boolean;
  /** Only these rows (a window of at most `limit` ids, for an export kept to a pipeline's selection). */
  ids?: readonly number[];
}

/**
 * A chunk of the annotations of a page of images: those of images `from.imageId`..`lastImageId` that come after
 * `from` in (image id, annotation id) order, at most `limit` of them. Chunks bound the rows one query reads however
 * many annotations an image has.
 */
export interface AnnotationCursor {
  from: { imageId: number; id: number };
  lastImageId: number;
  limit: number;
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
  async projectClasses(projectId: number): Promise<{ id: number; name: string; skeleton: string | null; attributes: string | null }[]> {
    return this.db.selectFrom('classes').select(['id', 'name', 'skeleton', 'attributes']).where('project_id', '=', projectId).orderBy('id').execute();
  }

  /** One page of a project's images in id order, after the cursor (keyset on the (project_id, id) index). */
  projectImages(projectId: number, page: PageCursor): Promise<ExportImageRow[]> {
    let query = this.db
      .selectFrom('images')
      .select(['id', 'filename', 'width', 'height', 'split', 'blob_key', 'video_id', 'frame'])
      .where('project_id', '=', projectId)
      .where('id', '>', page.after);
    if (page.ids) query = query.where('id', 'in', page.ids.length ? [...page.ids] : [0]);
    if (page.annotatedOnly) query = query.where('annotation_count', '>', 0);
    return query.orderBy('id').limit(page.limit).execute();
  }

  /**
   * A chunk of the annotations of a range of the project's images, in image then id order, with their class names.
   * The images are named by a subquery on the (project_id, id) index rather than by `annotations.project_id`, so the
   * annotations are read along their (image_id, id) index in order: filtering on project_id lets SQLite scan every
   * annotation of the project for each chunk, which made a 1M-annotation export quadratic.
   */
  projectAnnotations(projectId: number, cursor: AnnotationCursor, includeSuggested = false): Promise<ExportAnnotationRow[]> {
    let query = this.db
      .selectFrom('annotations')
      .innerJoin('classes', 'classes.id', 'annotations.class_id')
      .select(['annotations.id', 'annotations.image_id', 'classes.name as class_name', 'annotations.annotation_type', 'annotations.geometry', 'annotations.attributes', 'annotations.group_id'])
      .where('annotations.image_id', 'in', (eb) =>
        eb
          .selectFrom('images')
          .select('images.id')
          .where('images.project_id', '=', projectId)
          .where('images.id', '>=', cursor.from.imageId)
          .where('images.id', '<=', cursor.lastImageId),
      )
      .where((eb) => eb(eb.refTuple('annotations.image_id', 'annotations.id'), '>', eb.tuple(cursor.from.imageId, cursor.from.id)));
    if (!includeSuggested) query = query.where('annotations.status', '=', 'accepted');
    return query.orderBy('annotations.image_id').orderBy('annotations.id').limit(cursor.limit).execute();
  }

  findVersion(versionId: number): Promise<Pick<VersionsTable, 'project_id' | 'number' | 'status'> & { id: number } | undefined> {
    return this.db.selectFrom('versions').select(['id', 'project_id', 'number', 'status']).where('id', '=', versionId).executeTakeFirst();
  }

  /** A version's classes in index order, with the skeletons and attribute specs they had when it was made. */
  versionClasses(versionId: number): Promise<{ name: string; skeleton: string | null; attributes: string | null }[]> {
    return this.db.selectFrom('version_classes').select(['name', 'skeleton', 'attributes']).where('version_id', '=', versionId).orderBy('index').execute();
  }

  /** One page of a version's images of one split (keyset on the (version_id, split, id) index). */
  /** The ids of a version's images made from the given source images, ascending (read 1,000 sources at a time). */
  async versionImageIdsOf(versionId: number, sourceImageIds: readonly number[]): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < sourceImageIds.length; i += 1000) {
      const rows = await this.db
        .selectFrom('version_images')
        .select('id')
        .where('version_id', '=', versionId)
        .where('source_image_id', 'in', sourceImageIds.slice(i, i + 1000))
        .execute();
      for (const row of rows) ids.push(row.id);
    }
    return ids.sort((a, b) => a - b);
  }

  versionImages(versionId: number, split: string, page: PageCursor): Promise<ExportImageRow[]> {
    let query = this.db
      .selectFrom('version_images')
      .select(['id', 'filename', 'width', 'height', 'split', 'blob_key', 'video_id', 'frame'])
      .where('version_id', '=', versionId)
      .where('split', '=', split)
      .where('id', '>', page.after);
    if (page.ids) query = query.where('id', 'in', page.ids.length ? [...page.ids] : [0]);
    if (page.annotatedOnly) {
      query = query.where((eb) => eb.exists(eb.selectFrom('version_annotations').select('id').whereRef('version_image_id', '=', 'version_images.id')));
    }
    return query.orderBy('id').limit(page.limit).execute();
  }

  /** A chunk of the annotations of a range of a version's images of one split (see projectAnnotations). */
  versionAnnotations(versionId: number, split: string, cursor: AnnotationCursor): Promise<ExportAnnotationRow[]> {
    return this.db
      .selectFrom('version_annotations')
      .select(['id', 'version_image_id as image_id', 'class_name', 'annotation_type', 'geometry', 'attributes', 'group_id'])
      .where('version_image_id', 'in', (eb) =>
        eb
          .selectFrom('version_images')
          .select('version_images.id')
          .where('version_images.version_id', '=', versionId)
          .where('version_images.split', '=', split)
          .where('version_images.id', '>=', cursor.from.imageId)
          .where('version_images.id', '<=', cursor.lastImageId),
      )
      .where((eb) => eb(eb.refTuple('version_image_id', 'id'), '>', eb.tuple(cursor.from.imageId, cursor.from.id)))
      .orderBy('version_image_id')
      .orderBy('id')
      .limit(cursor.limit)
      .execute();
  }

  /** The project's videos, oldest first. */
  projectVideos(projectId: number): Promise<{ id: number; name: string; fps: number; frame_count: number; width: number; height: number }[]> {
    return this.db.selectFrom('videos').select(['id', 'name', 'fps', 'frame_count', 'width', 'height']).where('project_id', '=', projectId).where('status', '=', 'ready').orderBy('id').execute();
  }

  /**
   * The videos a version's outputs are frames of, as they are now; a video deleted since keeps its id, a name made of
   * it, MOT's default rate and the frames the version holds of it.
   */
  async versionVideos(versionId: number): Promise<{ id: number; name: string; fps: number; frame_count: number; width: number; height: number }[]> {
    const rows = await this.db
      .selectFrom('version_images')
      .leftJoin('videos', 'videos.id', 'version_images.video_id')
      .select(['version_images.video_id', 'videos.name', 'videos.fps', 'videos.frame_count', 'videos.width', 'videos.height'])
      .select((eb) => eb.fn.max('version_images.frame').as('last'))
      .where('version_images.version_id', '=', versionId)
      .where('version_images.video_id', 'is not', null)
      .groupBy(['version_images.video_id', 'videos.name', 'videos.fps', 'videos.frame_count', 'videos.width', 'videos.height'])
      .orderBy('version_images.video_id')
      .execute();
    return rows.map((v) => ({
      id: v.video_id!,
      name: v.name ?? `video-${v.video_id}`,
      fps: v.fps ?? 25,
      frame_count: v.frame_count ?? Number(v.last) + 1,
      width: v.width ?? 0,
      height: v.height ?? 0,
    }));
  }

  /** The project's tracks with their class names, and their keyframes by track and frame. */
  projectTracks(projectId: number) {
    return projectTracks(this.db, projectId);
  }

  /** Whether an export references the version (the versions module refuses to delete it then). */
  async versionInUse(versionId: number): Promise<boolean> {
    return (await this.db.selectFrom('exports').select('id').where('version_id', '=', versionId).limit(1).executeTakeFirst()) !== undefined;
  }
}
