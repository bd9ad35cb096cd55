import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('config', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8000);
    assert.equal(config.host, '127.0.0.1');
    assert.match(config.dataDir, /\/data$/);
    assert.equal(config.databaseUrl, null);
    assert.equal(config.redisUrl, null);
    assert.equal(config.maxUploadBytes, 50 * 1024 * 1024);
    assert.equal(config.maxImagePixels, 100_000_000);
    assert.equal(config.importRoot, null);
    assert.equal(config.trainingPerProject, 1);
    assert.equal(config.trainingQueuedPerUser, 10);
    assert.ok(Object.isFrozen(config));
  });

  it('fails fast with a clear message on bad values', () => {
    assert.throws(() => loadConfig({ PORT: 'eighty' }), (e: Error) => e instanceof ConfigError && /PORT/.test(e.message));
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
    assert.throws(() => loadConfig({ REDIS_URL: 'http://x' }), /REDIS_URL/);
    assert.throws(() => loadConfig({ VERSA_ROLE: 'boss' }), /VERSA_ROLE/);
    assert.throws(() => loadConfig({ VERSA_ROLE: 'worker' }), /REDIS_URL/);
    assert.throws(() => loadConfig({ MAX_UPLOAD_MB: '0' }), /MAX_UPLOAD_MB/);
    assert.throws(() => loadConfig({ TRAINING_PER_PROJECT: '0' }), /TRAINING_PER_PROJECT must be an integer between 1/);
    assert.throws(() => loadConfig({ TRAINING_QUEUED_PER_USER: 'ten' }), /TRAINING_QUEUED_PER_USER/);
  });

  it('reads PostgreSQL, Redis and limits from the environment', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@h/db', REDIS_URL: 'redis://h:6379', MAX_UPLOAD_MB: '5', MAX_IMAGE_MEGAPIXELS: '2',
      IMPORT_ROOT: '/srv/datasets', VERSA_ROLE: 'api',
    });
    assert.equal(config.databaseUrl, 'postgres://u@h/db');
    assert.equal(config.redisUrl, 'redis://h:6379');
    assert.equal(config.maxUploadBytes, 5 * 1024 * 1024);
    assert.equal(config.maxImagePixels, 2_000_000);
    assert.equal(config.importRoot, '/srv/datasets');
    assert.equal(config.role, 'api');
  });
});
