/** The sealed secrets and the blob keys of images imported by reference (issue 27). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SecretBox } from '../../src/lib/secret-box.js';
import { assertBlobKey } from '../../src/storage/blob-store.js';
import { parseStorageObjectBlobKey, storageObjectBlobKey } from '../../src/storage/keys.js';

describe('SecretBox', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));
  it('opens what it sealed, only with the same key and context, and never the same text twice', () => {
    const sealed = box.seal('s3cr3t', 'project-storage:1');
    assert.ok(!sealed.includes('s3cr3t'));
    assert.notEqual(box.seal('s3cr3t', 'project-storage:1'), sealed);
    assert.equal(box.open(sealed, 'project-storage:1'), 's3cr3t');
    assert.throws(() => box.open(sealed, 'project-storage:2'));
    assert.throws(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed, 'project-storage:1'));
    const parts = sealed.split('.');
    parts[3] = Buffer.from('x' + Buffer.from(parts[3], 'base64url').toString('latin1').slice(1), 'latin1').toString('base64url');
    assert.throws(() => box.open(parts.join('.'), 'project-storage:1'), 'an altered ciphertext');
  });
});

describe('storage object blob keys', () => {
  it('round-trip any object key and ETag, and are valid blob keys', () => {
    for (const [objectKey, etag] of [['photos/2024/a b+c.JPG', '"0123456789abcdef0123456789abcdef"'], ['ü/日本.png', '"abc-3"'], ['x.jpg', 'W/"weird"']]) {
      const key = storageObjectBlobKey(12, etag, objectKey, 'jpg')!;
      assertBlobKey(key);
      const parsed = parseStorageObjectBlobKey(key)!;
      assert.equal(parsed.storageId, 12);
      assert.equal(parsed.objectKey, objectKey);
      assert.equal(parsed.etag, etag.startsWith('W/') ? null : etag, 'an ETag that is not hex is not checked');
    }
  });
  it('is null for an object key too long to fit, and no other key parses as one', () => {
    assert.equal(storageObjectBlobKey(1, '"ab"', 'k'.repeat(400), 'png'), null);
    assert.equal(parseStorageObjectBlobKey('projects/1/images/abc.jpg'), null);
  });
});

describe('storage settings', () => {
  it('take SECRETS_KEY as 32 bytes (hex or base64) only, and STORAGE_ALLOWLIST as http(s) URLs', async () => {
    const { loadConfig } = await import('../../src/config.js');
    assert.equal(loadConfig({ SECRETS_KEY: 'ab'.repeat(32) }).secretsKey?.length, 32);
    assert.equal(loadConfig({ SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') }).secretsKey?.length, 32);
    assert.equal(loadConfig({}).secretsKey, null);
    assert.throws(() => loadConfig({ SECRETS_KEY: 'too-short' }), /SECRETS_KEY/);
    assert.deepEqual(loadConfig({ STORAGE_ALLOWLIST: 'http://127.0.0.1:7480, https://s3.eu-west-1.amazonaws.com' }).storageAllowlist, ['http://127.0.0.1:7480/', 'https://s3.eu-west-1.amazonaws.com/']);
    assert.throws(() => loadConfig({ STORAGE_ALLOWLIST: 'ftp://x' }), /STORAGE_ALLOWLIST/);
  });
});
