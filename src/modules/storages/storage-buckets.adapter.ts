import type { SecretBox } from '../../lib/secret-box.js';
import { S3Bucket, type BucketLocation } from '../../storage/s3-bucket.js';
import type { ObjectSource } from '../../storage/sourced-blob-store.js';
import type { StoragesRepository } from './storages.repository.js';
import type { StorageRow } from './storages.schemas.js';

/** What a storage's credentials are sealed for: its project (a sealed value copied into another project's row fails to open). */
export const credentialsContext = (projectId: number): string => `project-storage:${projectId}`;

export interface StorageCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/**
 * The S3 clients of project storages, one per storage and version of its settings (a changed endpoint or key makes a
 * new one): the sync and the connection test use them, and so does the blob store for images imported by reference,
 * which asks by storage id (`source`). Credentials are opened here, from the sealed column, only to hand them to the
 * client; nothing else sees them.
 */
export class StorageBuckets {
  private readonly clients = new Map<number, { version: string; bucket: S3Bucket }>();

  constructor(
    private readonly storages: StoragesRepository,
    private readonly box: SecretBox | null,
  ) {}

  /** Whether secrets can be stored (SECRETS_KEY is set). */
  get canSeal(): boolean {
    return this.box !== null;
  }

  seal(projectId: number, credentials: StorageCredentials): string {
    if (!this.box) throw new Error('SECRETS_KEY is not set');
    return this.box.seal(JSON.stringify({ accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey }), credentialsContext(projectId));
  }

  /** A client for the storage as it is now (a fresh one for a row whose settings are not saved yet: a connection test). */
  bucket(row: StorageRow): S3Bucket {
    const version = `${row.updated_at}|${row.endpoint}|${row.region}|${row.force_path_style}|${row.credentials}`;
    const cached = this.clients.get(row.id);
    if (cached?.version === version) return cached.bucket;
    cached?.bucket.destroy();
    const bucket = new S3Bucket(this.location(row));
    this.clients.set(row.id, { version, bucket });
    return bucket;
  }

  location(row: Pick<StorageRow, 'project_id' | 'endpoint' | 'region' | 'force_path_style' | 'bucket' | 'prefix' | 'credentials'>): BucketLocation {
    if (!this.box) throw new Error('SECRETS_KEY is not set: the storage\'s credentials cannot be read');
    const credentials = JSON.parse(this.box.open(row.credentials, credentialsContext(row.project_id))) as StorageCredentials;
    return { endpoint: row.endpoint, region: row.region, forcePathStyle: row.force_path_style === 1, bucket: row.bucket, prefix: row.prefix, credentials };
  }

  /** The objects of storage `id`, for the blob store; null once the storage is gone. */
  async source(id: number): Promise<ObjectSource | null> {
    const row = await this.storages.find(id);
    if (!row) {
      this.forget(id);
      return null;
    }
    return this.bucket(row);
  }

  forget(id: number): void {
    this.clients.get(id)?.bucket.destroy();
    this.clients.delete(id);
  }

  close(): void {
    for (const id of [...this.clients.keys()]) this.forget(id);
  }
}
