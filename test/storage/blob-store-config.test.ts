import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('BLOB_STORE', () => {
  it('defaults to the folder DATA_DIR/blobs', () => {
    assert.deepEqual(loadConfig({ DATA_DIR: '/srv/versa' }).blobStore, { kind: 'local', root: join(resolve('/srv/versa'), 'blobs') });
    assert.equal(loadConfig({ BLOB_STORE: 'local' }).blobStore.kind, 'local');
  });

  it('s3://bucket/prefix takes endpoint, region, path style, checksums and credentials from the environment', () => {
    const config = loadConfig({
      BLOB_STORE: 's3://versa-data/prod/blobs/', S3_ENDPOINT: 'http://127.0.0.1:7480', S3_REGION: 'eu-west-1', S3_FORCE_PATH_STYLE: '1',
      S3_CHECKSUMS: 'WHEN_REQUIRED', AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK',
    }).blobStore;
    assert.deepEqual(config, {
      kind: 's3', bucket: 'versa-data', prefix: 'prod/blobs', endpoint: 'http://127.0.0.1:7480', region: 'eu-west-1', forcePathStyle: true,
      checksums: 'WHEN_REQUIRED', credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' },
    });
  });

  it('on AWS: no endpoint, virtual-hosted addressing, the SDK\'s checksums and credential chain', () => {
    assert.deepEqual(loadConfig({ BLOB_STORE: 's3://versa-data' }).blobStore, {
      kind: 's3', bucket: 'versa-data', prefix: '', endpoint: null, region: 'us-east-1', forcePathStyle: false, checksums: 'WHEN_SUPPORTED', credentials: null,
    });
  });

  it('refuses what it cannot use, saying which variable', () => {
    for (const [env, name] of [
      [{ BLOB_STORE: 'gs://bucket' }, /BLOB_STORE/],
      [{ BLOB_STORE: 's3://Bad_Bucket/x' }, /BLOB_STORE/],
      [{ BLOB_STORE: 's3://bucket/a/../b' }, /BLOB_STORE/],
      [{ BLOB_STORE: 's3://bucket/a//b' }, /BLOB_STORE/],
      [{ BLOB_STORE: 's3://bucket', S3_ENDPOINT: 'ftp://host' }, /S3_ENDPOINT/],
      [{ BLOB_STORE: 's3://bucket', S3_CHECKSUMS: 'NEVER' }, /S3_CHECKSUMS/],
      [{ BLOB_STORE: 's3://bucket', S3_FORCE_PATH_STYLE: 'yes' }, /S3_FORCE_PATH_STYLE/],
      [{ BLOB_STORE: 's3://bucket', AWS_ACCESS_KEY_ID: 'AK' }, /AWS_SECRET_ACCESS_KEY/],
    ] as const) {
      assert.throws(() => loadConfig(env), (e: Error) => e instanceof ConfigError && name.test(e.message), JSON.stringify(env));
    }
  });
});
