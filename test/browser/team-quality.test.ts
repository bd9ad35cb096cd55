/// <reference lib="dom" />
/**
 * The Team quality page and the disagreement queue in Chromium (issue 29): a project with three annotators, two
 * ground-truth images marked through the page and an overlap of three set through it; the table shows the API's
 * figures, the CSV downloads as the API writes it, a reviewer settles a disagreement by picking a version over the
 * overlay, and an annotator reaches neither the page nor its link (until the lead shows them their own row).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { type APIRequestContext } from 'playwright-core';
import sharp from 'sharp';
import { apiAccount, livePageSuite, SKIP_REASON, screenshot, until, signPageIn } from './browser-harness.js';
import { withDraws } from '../helpers/random-draws.js';

const box = (class_id: number, x: number, y: number, w: number, h: number) => ({ class_id, annotation_type: 'bbox', geometry: { x, y, width: w, height: h } });
type Shape = ReturnType<typeof box>;

interface Figures {
  user_id: number;
  email: string;
  display_name: string;
  tasks_submitted: number;
  seconds_per_image: number | null;
  objects_per_hour: number | null;
  rejection_rate: number | null;
  rework_rate: number | null;
  agreement: number | null;
  ground_truth: { images: number; precision: number | null; recall: number | null; f1: number | null; mean_iou: number | null; class_accuracy: number | null };
  per_class: { class_id: number; f1: number }[];
}

// The page's way of writing figures, from its definition (scores to 3 decimals, rates as percentages, "—" for none).
const score = (n: number | null) => (n === null ? '—' : n.toFixed(3));
const percent = (n: number | null) => (n === null ? '—' : `${(n * 100).toFixed(1)}%`);
const expectedCells = (a: Figures): Record<string, string> => ({
  name: a.display_name,
  gt_images: String(a.ground_truth.images),
  precision: score(a.ground_truth.precision),
  recall: score(a.ground_truth.recall),
  f1: score(a.ground_truth.f1),
  mean_iou: score(a.ground_truth.mean_iou),
  class_accuracy: score(a.ground_truth.class_accuracy),
  agreement: score(a.agreement),
  tasks_submitted: String(a.tasks_submitted),
  seconds_per_image: a.seconds_per_image === null ? '—' : `${a.seconds_per_image.toFixed(1)} s`,
  objects_per_hour: a.objects_per_hour === null ? '—' : a.objects_per_hour.toFixed(1),
  rejection_rate: percent(a.rejection_rate),
  rework_rate: percent(a.rework_rate),
});

const png = (shade: number) => sharp({ create: { width: 400, height: 400, channels: 3, background: { r: shade, g: 120, b: 200 - shade } } }).png().toBuffer();

describe('Team quality page and disagreement queue in Chromium (issue 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];

  /** A user with their own API session (cookie jar), apart from the page's. */
  const account = (email: string, displayName: string) => apiAccount(live.server.baseUrl, sessions, email, displayName);
  type Account = Awaited<ReturnType<typeof account>>;

  const signInPage = (who: Account) => signPageIn(live.page, live.server.baseUrl, who.email);

  it('shows the API figures, marks ground truth and sets overlap, exports CSV, settles a disagreement, and keeps annotators out', async () => {
    const base = live.server.baseUrl;
    await account('admin@example.com', 'Instance admin');
    const owner = await account('lead@example.com', 'Lead');
    const reviewer = await account('rita@example.com', 'Rita');
    const annotators = [await account('ada@example.com', 'Ada'), await account('ben@example.com', 'Ben'), await account('cy@example.com', 'Cy')];
    const [a1, a2, a3] = annotators;
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Street scenes' })).id;
    const qc = `/api/projects/${projectId}/quality-control`;
    for (const u of annotators) await owner.call('post', `/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: reviewer.id, role: 'reviewer' });
    const car = (await owner.call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'car' })).id;
    const bus = (await owner.call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'bus' })).id;
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await owner.ctx.post(`/api/projects/${projectId}/images`, { multipart: { files: { name: `street-${i}.png`, mimeType: 'image/png', buffer: await png(i * 40) } } });
      assert.equal(res.status(), 201, await res.text());
      ids.push((await res.json()).images[0].id);
    }
    const [g1, g2, p1, p2, p3] = ids;
    // The reference labels of the two ground-truth images, reviewed and approved.
    const reference: Record<number, Shape[]> = { [g1]: [box(car, 10, 10, 50, 50), box(bus, 100, 100, 40, 40)], [g2]: [box(car, 200, 50, 60, 60)] };
    for (const g of [g1, g2]) {
      for (const s of reference[g]) await owner.call('post', `/api/images/${g}/annotations`, s);
      const review = await owner.call<{ id: number }>('post', `/api/projects/${projectId}/reviews`, { image_id: g });
      await owner.call('post', `/api/reviews/${review.id}/decide`, { decision: 'approve' }, 200);
    }
    // Reviews of their earlier work, before the project kept ground truth (from then on they label through their
    // tasks): Ben's rejected, Cy's sent back for changes. The image is reviewed, so no task deals it.
    const earlier = await owner.ctx.post(`/api/projects/${projectId}/images`, { multipart: { files: { name: 'street-earlier.png', mimeType: 'image/png', buffer: await png(190) } } });
    const earlierId = (await earlier.json()).images[0].id as number;
    for (const [u, decision] of [[a2, 'reject'], [a3, 'changes']] as const) {
      const review = await u.call<{ id: number }>('post', `/api/projects/${projectId}/reviews`, { image_id: earlierId });
      await owner.call('post', `/api/reviews/${review.id}/decide`, { decision, comment: 'Look again' }, 200);
    }

    // The lead opens the page from the project's navigation.
    await signInPage(owner);
    await live.page.goto(`${base}/projects/${projectId}`);
    await live.page.getByRole('link', { name: 'Team quality' }).click();
    await live.page.waitForURL(`${base}/projects/${projectId}/quality`);
    // Ground truth through the page: both approved images are offered, ticked and marked.
    const candidates = live.page.getByTestId('ground-truth-candidates');
    await candidates.locator(`li[data-image="${g1}"]`).waitFor();
    await candidates.getByLabel(new RegExp(`^Image ${g1} `)).check();
    await candidates.getByLabel(new RegExp(`^Image ${g2} `)).check();
    await live.page.getByRole('button', { name: 'Mark 2 as ground truth' }).click();
    await live.page.getByTestId('ground-truth-list').locator(`li[data-image="${g2}"]`).waitFor();
    const marked = await owner.call<{ image_id: number; shapes: unknown[] }[]>('get', `${qc}/ground-truth`);
    assert.deepEqual(marked.map((g) => [g.image_id, g.shapes.length]), [[g1, 2], [g2, 1]]);
    // Overlap 3, a ground-truth share and the threshold through the page.
    await live.page.getByLabel('Overlap').selectOption('3');
    await live.page.getByLabel('Ground-truth share').fill('0.5');
    await live.page.getByLabel('Agreement threshold').fill('0.7');
    await live.page.getByRole('button', { name: 'Save settings' }).click();
    await live.page.getByRole('status').filter({ hasText: 'Settings saved' }).waitFor();
    assert.deepEqual(await owner.call('get', `${qc}/settings`), { overlap: 3, ground_truth_share: 0.5, agreement_threshold: 0.7, annotators_see_scores: false, ground_truth_in_training: false });

    // The three annotators work: Ada draws nothing, Ben misses the bus, Cy calls the bus a car.
    const work: Record<number, Record<number, Shape[]>> = {
      [a1.id]: {},
      [a2.id]: { [g1]: [box(car, 10, 10, 50, 50)], [g2]: [box(car, 200, 50, 60, 60)], [p1]: [box(car, 300, 300, 40, 40)], [p2]: [box(car, 10, 10, 50, 50)], [p3]: [] },
      [a3.id]: { [g1]: [box(car, 10, 10, 50, 50), box(car, 100, 100, 40, 40)], [g2]: [box(car, 200, 50, 60, 60)], [p1]: [box(car, 300, 300, 40, 40)], [p2]: [box(car, 10, 10, 50, 50)], [p3]: [] },
    };
    for (const u of annotators) {
      const dealt: number[] = [];
      await withDraws([0], async () => {
        for (;;) {
          const next = await u.call<{ task: { image_id: number } | null }>('post', `${qc}/tasks/next`, undefined, 200);
          if (next.task === null) break;
          const imageId = next.task.image_id;
          dealt.push(imageId);
          await u.call('put', `${qc}/tasks/${imageId}`, { shapes: work[u.id][imageId] ?? [] });
          await u.call('post', `${qc}/tasks/${imageId}/submit`, undefined, 200);
        }
      });
      assert.deepEqual([...dealt].sort((x, y) => x - y), ids, `${u.email} had every image`);
    }

    // The table shows the API's figures, cell for cell.
    await live.page.getByRole('button', { name: 'Refresh' }).click();
    const figures = await owner.call<Figures[]>('get', `${qc}/annotators`);
    // A row per annotator: the lead, who approved their own reference labels, labelled no task and is not one.
    assert.deepEqual(figures.map((f) => f.user_id), annotators.map((u) => u.id));
    const of = (u: Account) => figures.find((f) => f.user_id === u.id)!;
    assert.equal(of(a2).ground_truth.f1, 0.8);
    assert.equal(of(a2).rejection_rate, 1);
    const table = live.page.getByTestId('annotator-table');
    await until('a row per annotator, with submissions', async () => (await table.locator('tbody tr').count()) === figures.length && (await table.locator(`tr[data-user="${a1.id}"] td[data-col="tasks_submitted"]`).textContent()) === '5');
    for (const f of figures) {
      const shown = await table.locator(`tr[data-user="${f.user_id}"] td`).evaluateAll((cells) => Object.fromEntries(cells.map((c) => [c.getAttribute('data-col'), c.textContent])));
      assert.deepEqual(shown, expectedCells(f), f.email);
    }
    assert.equal(await table.locator(`tr[data-user="${a2.id}"] td[data-col="f1"]`).textContent(), '0.800');
    assert.equal(await table.locator(`tr[data-user="${a2.id}"] td[data-col="rejection_rate"]`).textContent(), '100.0%');
    // Per class: Cy's bus miss, from the API's per-class figures.
    const cyBus = of(a3).per_class.find((c) => c.class_id === bus)!;
    assert.equal(await live.page.locator(`[data-testid="per-class-table"] tr[data-user="${a3.id}"][data-class="${bus}"] td[data-col="f1"]`).textContent(), score(cyBus.f1));
    // The three charts, drawn.
    for (const label of ['Per annotator: ground-truth F1, mean IoU, agreement', 'Per class: ground-truth F1 by annotator', 'Over time: ground-truth F1 by day']) {
      const canvas = live.page.locator(`canvas[aria-label="${label}"]`);
      assert.equal(await canvas.count(), 1, label);
      assert.ok(await canvas.evaluate((c: HTMLCanvasElement) => c.width > 0 && c.height > 0), label);
    }
    await screenshot(live.page, 'team-quality-01-table');

    // The CSV, downloaded through the button, is the API's export.
    const [download] = await Promise.all([live.page.waitForEvent('download'), live.page.getByRole('link', { name: 'Export CSV' }).click()]);
    assert.equal(download.suggestedFilename(), `annotators-${projectId}.csv`);
    const csv = await readFile((await download.path())!, 'utf8');
    assert.equal(csv, await (await owner.ctx.get(`${qc}/annotators/export`)).text());
    assert.equal(csv.trim().split('\n').length, 1 + figures.length);
    assert.ok(csv.split('\n').some((l) => l.startsWith(`${a2.id},${a2.email},5,`)));

    // A reviewer settles a disagreement: every version overlaid, Ben's picked.
    await signInPage(reviewer);
    await live.page.goto(`${base}/projects/${projectId}`);
    assert.equal(await live.page.getByRole('link', { name: 'Team quality' }).count(), 0);
    await live.page.getByRole('link', { name: 'Disagreements' }).click();
    await live.page.waitForURL(`${base}/projects/${projectId}/quality/disagreements`);
    const queue = await reviewer.call<{ image_id: number; versions: { user_id: number; shapes: unknown[] }[]; proposal: unknown[] }[]>('get', `${qc}/disagreements`);
    assert.deepEqual(queue.map((q) => q.image_id), [p1, p2]);
    await until('the queue count', async () => (await live.page.getByTestId('queue-count').textContent()) === '2 images to decide');
    await live.page.locator(`[data-testid="disagreement-list"] li[data-image="${p1}"] button`).click();
    const view = live.page.locator(`[data-testid="disagreement"][data-image="${p1}"]`);
    await view.waitFor();
    const entry = queue[0];
    const drawn = entry.versions.reduce((n, v) => n + v.shapes.length, 0) + entry.proposal.length;
    await until('every version overlaid', async () => (await view.locator('svg g[data-label]').count()) === drawn);
    const labels = await view.locator('svg g[data-label]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-label')));
    assert.deepEqual(labels, ['Ben: car', 'Cy: car', 'Consensus merge: car']);
    await live.page.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
    await screenshot(live.page, 'team-quality-02-disagreement');
    // Hiding a layer takes it off the image.
    await view.getByLabel('Show Cy').uncheck();
    assert.equal(await view.locator('svg g[data-label="Cy: car"]').count(), 0);
    await view.getByRole('button', { name: 'Pick Ben' }).click();
    await until('the decision recorded', async () => /Image \d+: Ben's version accepted \(1 shapes\), decision \d+ recorded/.test((await live.page.getByRole('status').textContent()) ?? ''));
    await until('the queue shrunk', async () => (await live.page.getByTestId('queue-count').textContent()) === '1 image to decide');
    const decisions = await reviewer.call<{ method: string; picked_user_id: number; decided_by: number; after: Shape[] }[]>('get', `${qc}/decisions?image_id=${p1}`);
    assert.deepEqual(decisions.map((d) => [d.method, d.picked_user_id, d.decided_by]), [['pick', a2.id, reviewer.id]]);
    assert.deepEqual(decisions[0].after, [box(car, 300, 300, 40, 40)]);
    const accepted = await reviewer.call<{ class_id: number; geometry: unknown }[]>('get', `/api/images/${p1}/annotations`);
    assert.deepEqual(accepted.map((a) => [a.class_id, a.geometry]), [[car, { x: 300, y: 300, width: 40, height: 40 }]]);
    // The other one by edit: of the shapes on offer, only Cy's is ticked and accepted.
    const second = live.page.locator(`[data-testid="disagreement"][data-image="${p2}"]`);
    await second.waitFor();
    await second.getByText('Edit: accept chosen shapes').click();
    await second.getByLabel('Cy: car 10, 10 50×50').check();
    await second.getByRole('button', { name: 'Accept 1 chosen shapes' }).click();
    await until('the edit recorded', async () => /your edit accepted \(1 shapes\)/.test((await live.page.getByRole('status').textContent()) ?? ''));
    await live.page.getByTestId('queue-empty').waitFor();
    const edited = await reviewer.call<{ method: string; after: Shape[] }[]>('get', `${qc}/decisions?image_id=${p2}`);
    assert.deepEqual(edited.map((d) => [d.method, d.after]), [['edit', [box(car, 10, 10, 50, 50)]]]);

    // An annotator sees neither the link nor the page (nor its figures through the API).
    await signInPage(a1);
    await live.page.goto(`${base}/projects/${projectId}`);
    await live.page.getByRole('link', { name: 'Samples' }).waitFor();
    await live.page.waitForLoadState('networkidle');
    for (const name of ['Team quality', 'Disagreements', 'My scores']) assert.equal(await live.page.getByRole('link', { name }).count(), 0, name);
    await live.page.goto(`${base}/projects/${projectId}/quality`);
    await live.page.getByTestId('quality-denied').waitFor();
    assert.equal(await live.page.getByTestId('annotator-table').count(), 0);
    assert.equal((await a1.ctx.get(`${qc}/annotators`)).status(), 403);
    assert.equal((await a1.ctx.get(`${qc}/annotators/export`)).status(), 403);
    await live.page.goto(`${base}/projects/${projectId}/quality/disagreements`);
    await live.page.getByText(/Only reviewers and admins decide reviews/).waitFor();
    assert.equal(await live.page.getByTestId('disagreement-list').count(), 0);
    await screenshot(live.page, 'team-quality-03-annotator-denied');

    // When the lead shows annotators their scores, the annotator gets "My scores": their own row only.
    await owner.call('put', `${qc}/settings`, { annotators_see_scores: true });
    await live.page.goto(`${base}/projects/${projectId}`);
    await live.page.getByRole('link', { name: 'My scores' }).click();
    const own = live.page.getByTestId('annotator-table');
    await own.locator('tbody tr').first().waitFor();
    assert.deepEqual(await own.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-user'))), [String(a1.id)]);
    const mine = (await a1.call<{ scores: Figures }>('get', `${qc}/my-scores`)).scores;
    const shown = await own.locator('tbody tr td').evaluateAll((cells) => Object.fromEntries(cells.map((c) => [c.getAttribute('data-col'), c.textContent])));
    assert.deepEqual(shown, expectedCells(mine));
    assert.equal(await live.page.getByRole('button', { name: 'Save settings' }).count(), 0);
    assert.equal(await live.page.getByRole('link', { name: 'Export CSV' }).count(), 0);
    await screenshot(live.page, 'team-quality-04-own-scores');

    assert.deepEqual(live.errors, []);
  });

  it('shows the samples\' report for a project with samples: scores, agreement, and the CSV the API exports', async () => {
    const base = live.server.baseUrl;
    const owner = await account('sample-lead@example.com', 'Sam Lead');
    const [a1, a2] = [await account('sia@example.com', 'Sia'), await account('tom@example.com', 'Tom')];
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Texts', project_type: 'classification' })).id;
    for (const u of [a1, a2]) await owner.call('post', `/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    for (const name of ['city', 'x', 'y']) await owner.call('post', `/api/projects/${projectId}/classes`, { name });
    const created = await owner.call<{ items: { id: number }[] }>('post', `/api/projects/${projectId}/samples`, { items: [
      { modality: 'text', data: { text: 'New York is big' }, label: 'city', spans: [{ start: 0, end: 8, label: 'LOC' }] },
      { modality: 'text', data: { text: 'first pool text' } },
    ] });
    const [g, p] = created.items.map((item) => item.id);
    await owner.call('post', `/api/samples/${g}/submit`, undefined, 200);
    await owner.call('post', `/api/samples/${g}/review`, { decision: 'approve' }, 200);
    const sqc = `/api/projects/${projectId}/quality-control/samples`;
    await owner.call('post', `${sqc}/ground-truth`, { sample_ids: [g] });
    await owner.call('put', `/api/projects/${projectId}/quality-control/settings`, { overlap: 2, ground_truth_share: 0.5 });
    // Sia: the truth's class, half its span; the pool text "x". Tom: the same, but "y" on the pool text.
    for (const [u, pool] of [[a1, 'x'], [a2, 'y']] as const) {
      const answers: Record<number, unknown> = { [g]: { label: 'city', spans: [{ start: 0, end: 3, label: 'LOC' }] }, [p]: { label: pool } };
      await withDraws([0], async () => {
        for (;;) {
          const next = await u.call<{ task: { sample_id: number } | null }>('post', `${sqc}/tasks/next`, undefined, 200);
          if (next.task === null) break;
          await u.call('put', `${sqc}/tasks/${next.task.sample_id}`, answers[next.task.sample_id]);
          await u.call('post', `${sqc}/tasks/${next.task.sample_id}/submit`, undefined, 200);
        }
      });
    }
    const report = await owner.call<{ annotators: { user_id: number; samples: number; class_accuracy: number | null; span_f1: number | null; span_counts: { tp: number; fp: number; fn: number }; segment_f1: number | null; reviews_decided: number; rejection_rate: number | null; rework_rate: number | null }[]; class_alpha: number | null; span_alpha: number | null }>('get', `${sqc}/report`);
    assert.deepEqual(report.annotators.map((a) => [a.user_id, a.samples]), [[a1.id, 1], [a2.id, 1]]);

    await signInPage(owner);
    await live.page.goto(`${base}/projects/${projectId}/quality`);
    const table = live.page.getByTestId('sample-table');
    await until('a row per annotator of samples', async () => (await table.locator('tbody tr').count()) === 2);
    const names = new Map([[a1.id, 'Sia'], [a2.id, 'Tom']]);
    for (const a of report.annotators) {
      const shown = await table.locator(`tr[data-user="${a.user_id}"] td`).evaluateAll((cells) => Object.fromEntries(cells.map((c) => [c.getAttribute('data-col'), c.textContent])));
      assert.deepEqual(shown, {
        name: names.get(a.user_id),
        samples: String(a.samples),
        class_accuracy: percent(a.class_accuracy),
        span_f1: score(a.span_f1),
        span_counts: `${a.span_counts.tp} / ${a.span_counts.fp} / ${a.span_counts.fn}`,
        segment_f1: score(a.segment_f1),
        label_jaccard: '—',
        value_mae: '—',
        preference_accuracy: '—',
        rating_mae: '—',
        transcript_wer: '—',
        reviews_decided: String(a.reviews_decided),
        rejection_rate: percent(a.rejection_rate),
        rework_rate: percent(a.rework_rate),
        // The pool text, x against y: alpha 1 − 1·2/2 = 0 for each; no values to agree on.
        class_alpha: '0.000',
        label_set_alpha: '—',
        value_alpha: '—',
        rating_alpha: '—',
        preference_alpha: '—',
        transcript_agreement: '—',
      });
    }
    assert.equal(await table.locator(`tr[data-user="${a1.id}"] td[data-col="span_f1"]`).textContent(), '0.667');
    const agreement = live.page.getByTestId('sample-agreement');
    assert.equal(await agreement.locator('[data-col="class_alpha"]').textContent(), score(report.class_alpha));
    assert.equal(await agreement.locator('[data-col="span_alpha"]').textContent(), score(report.span_alpha));
    for (const key of ['label_set_alpha', 'value_alpha', 'rating_alpha', 'preference_alpha', 'transcript_agreement']) assert.equal(await agreement.locator(`[data-col="${key}"]`).textContent(), '—');
    await screenshot(live.page, 'team-quality-05-samples');

    const [download] = await Promise.all([live.page.waitForEvent('download'), live.page.getByRole('link', { name: 'Export samples CSV' }).click()]);
    assert.equal(download.suggestedFilename(), `sample-annotators-${projectId}.csv`);
    const csv = await readFile((await download.path())!, 'utf8');
    assert.equal(csv, await (await owner.ctx.get(`${sqc}/report/export`)).text());
    assert.deepEqual(csv.trim().split('\n').map((line) => line.split(',').slice(0, 3)), [['user_id', 'email', 'samples'], [String(a1.id), a1.email, '1'], [String(a2.id), a2.email, '1']]);

    for (const ctx of sessions) await ctx.dispose();
    assert.deepEqual(live.errors, []);
  });
});
