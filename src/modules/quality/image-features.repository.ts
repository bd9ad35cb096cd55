import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ImageFeaturesTable } from '../../db/schema.js';

/** One image's cached features, as stored. */
export type FeatureRow = ImageFeaturesTable;

export interface HashRow {
  image_id: number;
  sha256: string;
  dhash: string;
  fine: string;
}

/** An image whose cached features or dHash are missing or stale (its bytes changed since). */
export interface UnmeasuredImage {
  id: number;
  sha256: string;
  mime_type: string;
  blob_key: string;
  has_features: number;
  has_hash: number;
}

/** One image with everything the image checks read: its row, its cached features and its dHash. */
export interface MeasuredImageRow {
  id: number;
  split: string | null;
  width: number;
  height: number;
  annotation_count: number;
  sha256: string;
  blob_key: string;
  readable: number | null;
  truncated: number | null;
  blur: number | null;
  brightness: number | null;
  entropy: number | null;
  grayscale: number | null;
  pixel_hash: string | null;
  dhash: string | null;
  fine: string | null;
}

const UPSERT_CHUNK = 500;

/** The feature cache: rows valid while their sha256 is the image's. */
export class ImageFeaturesRepository {
  constructor(private readonly db: Db) {}

  unmeasured(projectId: number, afterId: number, limit: number): Promise<UnmeasuredImage[]> {
    return this.db
      .selectFrom('images')
      .leftJoin('image_features', (j) => j.onRef('image_features.image_id', '=', 'images.id').onRef('image_features.sha256', '=', 'images.sha256'))
      .leftJoin('image_phashes', (j) => j.onRef('image_phashes.image_id', '=', 'images.id').onRef('image_phashes.sha256', '=', 'images.sha256'))
      .select([
        'images.id',
        'images.sha256',
        'images.mime_type',
        'images.blob_key',
        sql<number>`case when image_features.image_id is null then 0 else 1 end`.as('has_features'),
        sql<number>`case when image_phashes.image_id is null or image_phashes.fine is null then 0 else 1 end`.as('has_hash'),
      ])
      .where('images.project_id', '=', projectId)
      .where('images.id', '>', afterId)
      .where((eb) => eb.or([eb('image_features.image_id', 'is', null), eb('image_phashes.image_id', 'is', null), eb('image_phashes.fine', 'is', null)]))
      .orderBy('images.id')
      .limit(limit)
      .execute();
  }

  async save(features: FeatureRow[], hashes: HashRow[]): Promise<void> {
    for (let i = 0; i < features.length; i += UPSERT_CHUNK) {
      await this.db
        .insertInto('image_features')
        .values(features.slice(i, i + UPSERT_CHUNK))
        .onConflict((oc) =>
          oc.column('image_id').doUpdateSet((eb) => ({
            sha256: eb.ref('excluded.sha256'),
            readable: eb.ref('excluded.readable'),
            truncated: eb.ref('excluded.truncated'),
            blur: eb.ref('excluded.blur'),
            brightness: eb.ref('excluded.brightness'),
            entropy: eb.ref('excluded.entropy'),
            grayscale: eb.ref('excluded.grayscale'),
            pixel_hash: eb.ref('excluded.pixel_hash'),
          })),
        )
        .execute();
    }
    for (let i = 0; i < hashes.length; i += UPSERT_CHUNK) {
      await this.db
        .insertInto('image_phashes')
        .values(hashes.slice(i, i + UPSERT_CHUNK))
        .onConflict((oc) => oc.column('image_id').doUpdateSet((eb) => ({ sha256: eb.ref('excluded.sha256'), dhash: eb.ref('excluded.dhash'), fine: eb.ref('excluded.fine') })))
        .execute();
    }
  }

  /** Every image of the project with its features (null where not measured), in id order. */
  measured(projectId: number): Promise<MeasuredImageRow[]> {
    return this.db
      .selectFrom('images')
      .leftJoin('image_features', (j) => j.onRef('image_features.image_id', '=', 'images.id').onRef('image_features.sha256', '=', 'images.sha256'))
      .leftJoin('image_phashes', (j) => j.onRef('image_phashes.image_id', '=', 'images.id').onRef('image_phashes.sha256', '=', 'images.sha256'))
      .select([
        'images.id',
        'images.split',
        'images.width',
        'images.height',
        'images.annotation_count',
        'images.sha256',
        'images.blob_key',
        'image_features.readable',
        'image_features.truncated',
        'image_features.blur',
        'image_features.brightness',
        'image_features.entropy',
        'image_features.grayscale',
        'image_features.pixel_hash',
        'image_phashes.dhash',
        'image_phashes.fine',
      ])
      .where('images.project_id', '=', projectId)
      .orderBy('images.id')
      .execute();
  }
}
