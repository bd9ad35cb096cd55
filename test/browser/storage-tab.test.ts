/// <reference lib="dom" />
/**
 * The Storage tab (issue 27): attaching a bucket through the form, its row with the key's hint (never the secret),
 * the connection test's answer. Nothing listens at the endpoint (port 9), so the test fails and says so; the sync
 * itself is tested against a real S3 server in test/storage/storages-on-s3.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiCaller, livePageSuite, SKIP_REASON, screenshot, signInNewUser, until } from './browser-harness.js';

const ENDPOINT = 'http://127.0.0.1:9';

describe('Storage tab in Chromium', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite({ SECRETS_KEY: 'd'.repeat(64), STORAGE_ALLOWLIST: ENDPOINT });

  it('attaches a bucket, lists it with its key hint and counts, and shows what the connection test found', async () => {
    const base = live.server.baseUrl;
    const call = apiCaller(() => live.page, () => base);
    await signInNewUser(call, 'grace@example.com');
    const { id: projectId } = await call<{ id: number }>('post', '/api/projects', { name: 'Buckets' });
    await live.page.goto(`${base}/projects/${projectId}?tab=storage`);
    await until('the empty list', async () => (await live.page.getByText('No bucket is attached to this project.').count()) > 0);
    const page = live.page;
    await page.getByLabel('Name', { exact: true }).fill('cams');
    await page.getByLabel('Endpoint').fill(ENDPOINT);
    await page.getByLabel('Bucket').fill('cameras');
    await page.getByLabel('Prefix').fill('site-a');
    await page.getByLabel('Access key id').fill('AKIABROWSERKEYQRST');
    await page.getByLabel('Secret access key').fill('browserSecretValue123');
    await page.getByRole('button', { name: 'Attach' }).click();
    const row = page.getByTestId('storage-cams');
    await until('the new row', async () => (await row.count()) > 0);
    const text = (await row.textContent()) ?? '';
    assert.match(text, /key …QRST/);
    assert.match(text, /s3:\/\/cameras\/site-a/);
    assert.equal(await row.getByTestId('sync-state').textContent(), 'never');
    assert.equal(await row.getByTestId('count-imported').textContent(), '0');
    assert.ok(!(await page.content()).includes('browserSecretValue123'), 'the secret is not on the page once sent');
    await row.getByRole('button', { name: 'Test connection' }).click();
    const result = await until('the connection test', async () => (await row.getByTestId('connection-test').count()) > 0 && row.getByTestId('connection-test').textContent());
    assert.match(result ?? '', /✗ Listing s3:\/\/cameras\/site-a failed/);
    await screenshot(page, 'storage-01-tab');
    assert.deepEqual(live.errors, []);
  });
});
