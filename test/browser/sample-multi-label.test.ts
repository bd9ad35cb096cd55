/// <reference lib="dom" />
/**
 * Several classes for one sample in a multi-label project (issue 29), on the lead's samples page and in an
 * annotator's quality-control task: a checkbox per class, ticked by a click or toggled by its key 1–9; the sample (or
 * the task) keeps every class ticked, and unticking one removes it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type APIRequestContext, type Page } from 'playwright-core';
import { apiAccount, livePageSuite, SKIP_REASON, until, signPageIn } from './browser-harness.js';
import { withDraws } from '../helpers/random-draws.js';

type Label = string | string[] | null;
const sameSet = (label: Label, expected: string[]) => JSON.stringify([...(label === null ? [] : Array.isArray(label) ? label : [label])].sort()) === JSON.stringify(expected);
const box = (page: Page, name: string) => page.getByRole('group', { name: 'Sample classes' }).getByRole('checkbox', { name: new RegExp(`\\b${name}$`) });

describe('Several classes per sample in a multi-label project (issue 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];
  const account = (email: string) => apiAccount(live.server.baseUrl, sessions, email);

  it("ticks and toggles several classes of a text sample on the lead's page", async () => {
    await account('admin@example.com');
    const owner = await account('lead@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Topics', project_type: 'classification', multi_label: true })).id;
    for (const name of ['x', 'y', 'z']) await owner.call('post', `/api/projects/${projectId}/classes`, { name });
    const s = (await owner.call<{ id: number }>('post', `/api/projects/${projectId}/samples`, { modality: 'text', data: { text: 'sports and politics' } })).id;
    await signPageIn(live.page, live.server.baseUrl, owner.email);
    await live.page.goto(`${live.server.baseUrl}/projects/${projectId}/samples?modality=text`);
    await box(live.page, 'x').check();
    await until('x saved', async () => sameSet((await owner.call<{ label: Label }>('get', `/api/samples/${s}`)).label, ['x']) || undefined);
    await box(live.page, 'y').check();
    await until('x and y saved', async () => sameSet((await owner.call<{ label: Label }>('get', `/api/samples/${s}`)).label, ['x', 'y']) || undefined);
    await live.page.keyboard.press('3');
    await until('z toggled on by its key', async () => sameSet((await owner.call<{ label: Label }>('get', `/api/samples/${s}`)).label, ['x', 'y', 'z']) || undefined);
    assert.equal(await box(live.page, 'z').isChecked(), true);
    await box(live.page, 'x').uncheck();
    await until('x removed', async () => sameSet((await owner.call<{ label: Label }>('get', `/api/samples/${s}`)).label, ['y', 'z']) || undefined);
    await live.page.keyboard.press('2');
    await until('y toggled off by its key', async () => (await owner.call<{ label: Label }>('get', `/api/samples/${s}`)).label === 'z' || undefined);
    assert.deepEqual(live.errors, []);
  });

  it("keeps several classes in an annotator's quality-control task", async () => {
    const owner = await account('lead2@example.com');
    const ada = await account('ada@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Tags', project_type: 'classification', multi_label: true })).id;
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' });
    for (const name of ['x', 'y', 'z']) await owner.call('post', `/api/projects/${projectId}/classes`, { name });
    const created = await owner.call<{ items: { id: number }[] }>('post', `/api/projects/${projectId}/samples`, { items: [{ modality: 'text', data: { text: 'one text' } }, { modality: 'text', data: { text: 'another text' } }] });
    await owner.call('put', `/api/projects/${projectId}/quality-control/settings`, { overlap: 2, ground_truth_share: 0 });
    const dealt = (await withDraws([0], () => ada.call<{ task: { sample_id: number } }>('post', `/api/projects/${projectId}/quality-control/samples/tasks/next`, undefined, 200))).task.sample_id;
    assert.ok(created.items.some((i) => i.id === dealt));
    const task = async () => (await ada.call<{ label: Label }>('get', `/api/projects/${projectId}/quality-control/samples/tasks/${dealt}`)).label;
    await signPageIn(live.page, live.server.baseUrl, ada.email);
    await live.page.goto(`${live.server.baseUrl}/projects/${projectId}/samples`);
    await live.page.getByTestId('sample-task').waitFor();
    await box(live.page, 'x').waitFor();
    await live.page.keyboard.press('1');
    await until('x in the task', async () => sameSet(await task(), ['x']) || undefined);
    await live.page.keyboard.press('3');
    await until('x and z in the task', async () => sameSet(await task(), ['x', 'z']) || undefined);
    await box(live.page, 'y').check();
    await until('x, y and z in the task', async () => sameSet(await task(), ['x', 'y', 'z']) || undefined);
    await box(live.page, 'z').uncheck();
    await until('z removed from the task', async () => sameSet(await task(), ['x', 'y']) || undefined);
    assert.deepEqual((await owner.call<{ label: Label }>('get', `/api/samples/${dealt}`)).label, null, 'the sample itself is untouched');
    assert.deepEqual(live.errors, []);
    for (const s of sessions) await s.dispose();
  });
});
