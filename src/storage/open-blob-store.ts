import type { BlobStoreConfig } from '../config.js';
import type { BlobStore } from './blob-store.js';
import { LocalBlobStore } from './local-blob-store.js';

/** The store the configuration names. The S3 client is loaded only when a bucket is configured. */
export async function openBlobStore(config: BlobStoreConfig): Promise<BlobStore> {
  if (config.kind === 'local') return new LocalBlobStore(config.root);
  return new (await import('./s3-blob-store.js')).S3BlobStore(config);
}
