/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page, Route } from 'playwright-core';
import { mp4File, wavFile } from '../helpers/media-fixtures.js';
import { buildZip } from '../helpers/zip-build.js';
import { closeLivePage, openLivePage, SKIP_REASON, screenshot, until, type Browser, type LiveServer } from './browser-harness.js';

const jsonl = (rows: unknown[]) => Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

describe('sample labelling pages in Chromium', { skip: SKIP_REASON ?? false }, () => {
  let server: LiveServer;
  let browser: Browser;
  let page: Page;
  let projectId: number;
  const errors: string[] = [];

  before(async () => {
    ({ server, browser, page } = await openLivePage(errors));
    const base = server.baseUrl;
    await page.request.post(`${base}/api/auth/register`, { data: { email: 'sam@example.com', password: 'correct horse battery' } });
    const login = await page.request.post(`${base}/api/auth/login`, { data: { email: 'sam@example.com', password: 'correct horse battery' } });
    assert.equal(login.status(), 200);
    projectId = (await (await page.request.post(`${base}/api/projects`, { data: { name: 'Samples', project_type: 'classification' } })).json()).id;
    for (const name of ['PER', 'LOC']) await page.request.post(`${base}/api/projects/${projectId}/classes`, { data: { name } });
  });
  after(async () => {
    await closeLivePage({ browser, server });
  });

  const api = async (path: string) => (await page.request.get(server.baseUrl + path)).json();
  const importFile = async (kind: string, name: string, buffer: Buffer, fields: Record<string, string> = {}) => {
    const res = await page.request.post(`${server.baseUrl}/api/projects/${projectId}/import/${kind}`, { multipart: { ...fields, file: { name, mimeType: 'application/octet-stream', buffer } } });
    assert.equal(res.status(), 201, await res.text());
  };
  const samplesOf = (modality: string) => api(`/api/projects/${projectId}/samples?modality=${modality}`);

  it('labels text: mouse selection + class key makes a span, a key alone sets the label, arrows move on', async () => {
    await importFile('text', 'texts.jsonl', jsonl([{ text: 'Alice lives in Paris' }, { text: 'Bob visits Rome' }]));
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=text`);
    await page.getByTestId('sample-text').getByText('Alice lives in Paris').waitFor();
    await page.getByTestId('position').getByText('1 / 2').waitFor();
    // Select "Alice" (characters 0–5) with the mouse, as a user would drag across it.
    const box = (await page.getByTestId('sample-text').boundingBox())!;
    const word = await page.evaluate(() => {
      const node = document.querySelector('[data-testid="sample-text"] [data-start="0"]')!.firstChild!;
      const range = document.createRange();
      range.setStart(node, 0);
      range.setEnd(node, 5);
      const r = range.getBoundingClientRect();
      return { left: r.left, right: r.right, y: r.top + r.height / 2 };
    });
    assert.ok(word.left >= box.x);
    await page.mouse.move(word.left + 1, word.y);
    await page.mouse.down();
    await page.mouse.move(word.right - 1, word.y, { steps: 5 });
    await page.mouse.up();
    assert.equal(await page.evaluate(() => window.getSelection()!.toString()), 'Alice');
    await page.keyboard.press('1');
    const spanned = await until('span stored', async () => {
      const [first] = await samplesOf('text');
      return first.spans?.length === 1 && first;
    });
    assert.deepEqual(spanned.spans, [{ start: 0, end: 5, label: 'PER' }]);
    await page.locator('[data-testid="sample-text"] mark', { hasText: 'Alice' }).waitFor();

    await page.keyboard.press('2');
    await until('label stored', async () => (await samplesOf('text'))[0].label === 'LOC');
    await page.getByTestId('labelled-count').getByText('1').waitFor();
    await screenshot(page, 'samples-01-text');

    await page.keyboard.press('ArrowRight');
    await page.getByTestId('sample-text').getByText('Bob visits Rome').waitFor();
    await page.getByTestId('position').getByText('2 / 2').waitFor();
    // The open sample is locked for its viewer.
    await until('lock taken', async () => (await api(`/api/samples/${(await samplesOf('text'))[1].id}/lock`))?.user_id);
  });

  it('shows tabular rows in a virtualised table and stores an edited target', async () => {
    const rows = ['x,kind'];
    for (let i = 0; i < 400; i++) rows.push(`${i},${i % 2 ? 'PER' : 'LOC'}`);
    await importFile('tabular', 'rows.csv', Buffer.from(rows.join('\n')), { target: 'kind' });
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=tabular`);
    const table = page.getByRole('table', { name: 'Tabular samples' });
    await table.waitFor();
    await until('rows rendered', async () => (await page.locator('.sample-table-row').count()) > 0);
    assert.equal(await table.getAttribute('aria-rowcount'), '400');
    const rendered = await page.locator('.sample-table-row').count();
    assert.ok(rendered < 100, `only the rows in view are in the DOM (${rendered})`);
    const first = (await samplesOf('tabular'))[0];
    assert.equal(first.label, 'LOC');
    await page.getByLabel(`Target of sample ${first.id}`, { exact: true }).selectOption('PER');
    await until('target stored', async () => (await api(`/api/samples/${first.id}`)).label === 'PER');
    // Scrolling to the end brings the last rows into the DOM.
    await until('last row shown', async () => {
      // More rows load while scrolling toward the end; keep scrolling to the new end.
      await page.getByTestId('sample-table-body').evaluate((el) => (el.scrollTop = el.scrollHeight));
      return (await page.locator('.sample-table-row[aria-rowindex="400"]').count()) === 1;
    });
    await screenshot(page, 'samples-02-tabular');
  });

  it('rates an LLM pair and records the preference from the keyboard', async () => {
    await importFile('jsonl', 'llm.jsonl', jsonl([{ prompt: 'Capital of Italy?', chosen: 'Rome', rejected: 'Milan' }]), { modality: 'llm' });
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=llm`);
    await page.getByText('Capital of Italy?').waitFor();
    // Two keys while the first PATCH has not answered (answers held back 300 ms): the second edit builds on the first
    // (it used to start from the value before it, and the rating was lost).
    const slow = async (route: Route) => {
      if (route.request().method() !== 'PATCH') return route.continue();
      const response = await route.fetch();
      await new Promise((r) => setTimeout(r, 300));
      await route.fulfill({ response });
    };
    await page.route('**/api/samples/*', slow);
    try {
      await page.keyboard.press('4');
      await page.keyboard.press('b');
      const stored = await until('preference stored', async () => {
        const [s] = await samplesOf('llm');
        return s.value?.preference === 'rejected' && s;
      });
      assert.deepEqual(stored.value, { rating: 4, preference: 'rejected' });
    } finally {
      // Lets the held-back answers go out first.
      await page.unrouteAll({ behavior: 'wait' });
    }
    // The page shows the choice once the PATCH answers, which may come a moment after the row is stored.
    await until('choice shown', async () => (await page.getByRole('button', { name: /B Milan/ }).getAttribute('aria-pressed')) === 'true');
  });

  it('shows the review state and assignee, submits the open sample and decides it from the keyboard', async () => {
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=llm`);
    await page.getByText('Capital of Italy?').waitFor();
    await page.getByTestId('review-state').getByText('Not reviewed').waitFor();
    await page.getByTestId('assignee').getByText('Assigned to nobody').waitFor();
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByTestId('review-state').getByText('Waiting for review').waitFor();
    // LLM samples keep a/b/t for preferences: a plain `a` picks one, the review keys take Shift there.
    await page.keyboard.press('a');
    await until('preference stored', async () => (await samplesOf('llm'))[0].value?.preference === 'chosen');
    assert.equal((await samplesOf('llm'))[0].review_state, 'pending');
    // Asking for changes needs a comment: without one the key only focuses the comment box.
    await page.keyboard.press('Shift+C');
    await until('comment box focused', () => page.getByLabel('Review comment').evaluate((el) => el === document.activeElement));
    assert.equal((await samplesOf('llm'))[0].review_state, 'pending');
    await page.getByLabel('Review comment').fill('Rate the other answer too');
    await page.getByRole('button', { name: 'Request changes' }).click();
    await page.getByTestId('review-state').getByText('Changes requested').waitFor();
    await page.getByTestId('review-comment').getByText('Rate the other answer too').waitFor();
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByTestId('review-state').getByText('Waiting for review').waitFor();
    await page.keyboard.press('Shift+A');
    await page.getByTestId('review-state').getByText('Approved').waitFor();
    const [decided] = await samplesOf('llm');
    assert.equal(decided.review_state, 'approved');
    assert.equal(decided.value.preference, 'chosen');
  });

  it('segments audio on the waveform and video by frames', async () => {
    await importFile('jsonl', 'audio.zip', await buildZip([{ name: 'a.jsonl', data: jsonl([{ file: 'clip.wav' }]) }, { name: 'clip.wav', data: wavFile(2) }]), { modality: 'audio' });
    // Saving a label must not reload the clip: a stretch dragged while it reloaded was lost.
    const clipUrl = (await samplesOf('audio'))[0].data.file_url as string;
    let clipLoads = 0;
    page.on('request', (r) => { if (r.url().endsWith(clipUrl)) clipLoads++; });
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=audio`);
    const wave = page.getByTestId('waveform');
    await wave.waitFor();
    const drawn = await until('waveform decoded', async () => ((await wave.getAttribute('data-ready')) ?? (await wave.getAttribute('data-error'))) || undefined, 20_000);
    assert.equal(drawn, 'true', `wavesurfer: ${drawn}`);
    await page.keyboard.press('1');
    await until('clip label stored', async () => (await samplesOf('audio'))[0].label === 'PER');
    await page.getByTestId('sample-labels').getByText('PER').waitFor();
    await page.waitForTimeout(1000);
    assert.equal(clipLoads, 1, 'the clip was fetched again after a label was saved');
    const b = (await wave.boundingBox())!;
    await page.mouse.move(b.x + b.width * 0.25, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width * 0.6, b.y + b.height / 2, { steps: 10 });
    await page.mouse.up();
    await page.getByText(/Selected .* press 1–9/).waitFor();
    await page.keyboard.press('2');
    const seg = await until('segment stored', async () => (await samplesOf('audio'))[0].spans?.[0]);
    assert.equal(seg.label, 'LOC');
    assert.ok(seg.start_s > 0.3 && seg.start_s < 0.7 && seg.end_s > 1 && seg.end_s < 1.4, JSON.stringify(seg));
    await screenshot(page, 'samples-03-audio');

    await importFile('jsonl', 'video.zip', await buildZip([{ name: 'v.jsonl', data: jsonl([{ file: 'clip.mp4' }]) }, { name: 'clip.mp4', data: mp4File(2, 25) }]), { modality: 'video' });
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=video`);
    await page.getByText('2 s · 25 fps').waitFor();
    await page.keyboard.press('[');
    await page.keyboard.press(']');
    await page.getByText(/segment from 0\.000 s to 0\.040 s/).waitFor();
    await page.keyboard.press('1');
    const vseg = await until('video segment stored', async () => (await samplesOf('video'))[0].spans?.[0]);
    assert.deepEqual(vseg, { start_s: 0, end_s: 0.04, label: 'PER' });
    assert.deepEqual(errors, []);
  });
});
