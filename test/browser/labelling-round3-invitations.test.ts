/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiCaller, livePageSuite, signInNewUser, SKIP_REASON, until } from './browser-harness.js';

/**
 * Issue 30, item 8, in Chromium: with the server's SECRETS_KEY every open invitation is listed with its own link (the
 * one made at creation, kept encrypted), a Copy button that puts it on the clipboard, and Revoke.
 */
describe('labelling round 3: invitation links (issue 30, item 8)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite({ SECRETS_KEY: 'e'.repeat(64) });
  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  it('lists each open invitation with its link and a copy button; revoke removes it and its link stops working', async () => {
    const page = live.page;
    await signInNewUser(call, 'ada@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Invites' })).id;
    const ida = await call<{ url: string }>('post', `/api/projects/${projectId}/invitations`, { email: 'ida@example.com', role: 'annotator' });
    const ivo = await call<{ url: string }>('post', `/api/projects/${projectId}/invitations`, { email: 'ivo@example.com', role: 'viewer' });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base() });
    await page.goto(`${base()}/projects/${projectId}?tab=members`);
    const table = page.getByRole('table', { name: 'Invitations' });
    await table.locator('tr[data-invitation="ivo@example.com"]').waitFor();
    // Each row shows the very link made at creation, not a replacement.
    assert.equal(await table.getByLabel('Invitation link for ida@example.com').inputValue(), `${base()}${ida.url}`);
    assert.equal(await table.getByLabel('Invitation link for ivo@example.com').inputValue(), `${base()}${ivo.url}`);
    assert.equal(await table.getByRole('button', { name: 'New link' }).count(), 0, 'no replacement needed where the link is kept');

    const copy = table.getByRole('button', { name: 'Copy the link for ida@example.com' });
    await copy.click();
    await until('copied', async () => (await copy.textContent()) === 'Copied');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${base()}${ida.url}`, 'the link is on the clipboard');
    assert.equal((await page.request.get(`${base()}/api/invitations/${ida.url.split('/').pop()}`)).status(), 200, 'and it still works');

    await table.getByRole('button', { name: 'Revoke the invitation for ivo@example.com' }).click();
    await until('revoked', async () => (await table.locator('tr[data-invitation="ivo@example.com"]').count()) === 0);
    assert.equal((await page.request.get(`${base()}/api/invitations/${ivo.url.split('/').pop()}`)).status(), 404, 'the revoked link stops working');
    assert.equal(await table.locator('tr[data-invitation="ida@example.com"]').count(), 1);
    assert.deepEqual(live.errors, []);
  });
});
