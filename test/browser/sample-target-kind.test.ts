/// <reference lib="dom" />
/**
 * A tabular target's kind (a number for regression, a class otherwise) comes from the server (GET …/samples/target),
 * not from the rows a page happens to hold: the lead's table of a numeric target whose first page of rows has no
 * value yet shows number inputs; an annotator's quality-control task on a hidden numeric ground-truth row (listed to
 * her without its value) shows a number input, and the number she types is saved to her task.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type APIRequestContext } from 'playwright-core';
import { apiAccount, livePageSuite, SKIP_REASON, signPageIn } from './browser-harness.js';
import { withDraws } from '../helpers/random-draws.js';

describe('Tabular target kind from the server (issue 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];
  const account = (email: string) => apiAccount(live.server.baseUrl, sessions, email);

  it("shows number inputs in the lead's table when the first page of rows has no value yet", async () => {
    await account('admin@example.com');
    const owner = await account('lead@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Prices', project_type: 'classification' })).id;
    const items = [...Array.from({ length: 250 }, (_, i) => ({ modality: 'tabular', data: { row: { rooms: i } } })), { modality: 'tabular', data: { row: { rooms: 250 } }, value: 99.5 }];
    await owner.call('post', `/api/projects/${projectId}/samples`, { items });
    const first = (await owner.call<{ id: number }[]>('get', `/api/projects/${projectId}/samples?modality=tabular&limit=1`))[0].id;
    await signPageIn(live.page, live.server.baseUrl, owner.email);
    await live.page.goto(`${live.server.baseUrl}/projects/${projectId}/samples?modality=tabular`);
    const target = live.page.getByLabel(`Target of sample ${first}`, { exact: true });
    await target.waitFor();
    assert.equal(await target.evaluate((e) => e.tagName + ':' + ((e as HTMLInputElement).type ?? '')), 'INPUT:number');
    await target.fill('120');
    await target.blur();
    const saved = async () => (await owner.call<{ value: unknown }>('get', `/api/samples/${first}`)).value;
    for (let i = 0; i < 50 && (await saved()) !== 120; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await saved(), 120);
    assert.deepEqual(live.errors, []);
  });

  it("shows a number input on an annotator's task on a hidden numeric ground-truth row, and saves her number to the task", async () => {
    const owner = await account('lead2@example.com');
    const ada = await account('ada@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Rents', project_type: 'classification' })).id;
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' });
    const g = (await owner.call<{ id: number }>('post', `/api/projects/${projectId}/samples`, { modality: 'tabular', data: { row: { rooms: 3, city: 'Oslo' } }, value: 10 })).id;
    await owner.call('post', `/api/projects/${projectId}/samples`, { modality: 'tabular', data: { row: { rooms: 2, city: 'Bergen' } } }); // the pool, dealt beside ground truth
    await owner.call('post', `/api/samples/${g}/submit`, undefined, 200);
    await owner.call('post', `/api/samples/${g}/review`, { decision: 'approve' }, 200);
    const qc = `/api/projects/${projectId}/quality-control/samples`;
    await owner.call('post', `${qc}/ground-truth`, { sample_ids: [g] });
    await owner.call('put', `/api/projects/${projectId}/quality-control/settings`, { overlap: 1, ground_truth_share: 0.5 });
    // Listed to her, the ground-truth row has no value: a guess from her rows would make the target a class.
    assert.deepEqual((await ada.call<{ value: unknown }[]>('get', `/api/projects/${projectId}/samples?modality=tabular`)).map((s) => s.value), [null, null]);
    assert.equal((await withDraws([0], () => ada.call<{ task: { sample_id: number } }>('post', `${qc}/tasks/next`, undefined, 200))).task.sample_id, g);
    await signPageIn(live.page, live.server.baseUrl, ada.email);
    await live.page.goto(`${live.server.baseUrl}/projects/${projectId}/samples`);
    await live.page.getByTestId('sample-task').waitFor();
    const target = live.page.getByLabel(`Target of sample ${g}`, { exact: true });
    await target.waitFor();
    assert.equal(await target.evaluate((e) => e.tagName + ':' + ((e as HTMLInputElement).type ?? '')), 'INPUT:number');
    assert.equal(await target.inputValue(), '', 'her own answer, empty, not the truth');
    await target.fill('13');
    await target.blur();
    const task = async () => (await ada.call<{ value: unknown }>('get', `${qc}/tasks/${g}`)).value;
    for (let i = 0; i < 50 && (await task()) !== 13; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await task(), 13);
    assert.deepEqual(live.errors, []);
    for (const s of sessions) await s.dispose();
  });
});
