/**
 * "Next task" of quality control at scale (issue 29): a project of N images (default 1,000,000) seeded straight into
 * SQLite, annotators asking one after another for their next image. Timed per request, in-process:
 *   - bare: the same transaction without the overlap queue — the caller's open task, else the next unreviewed image
 *     after the last one dealt (one annotator per image, id order, a cursor in memory), dealt;
 *   - overlap: QualityControlService.next with overlap 3 (the stored shuffle key of qc_queue, migration 0040);
 *   - before (a few requests only): the order computed per request over every image, as dealing did before 0040.
 * Each request's task is submitted before the annotator's next one, so every request deals a new task. The queue
 * starts empty each round; the requests that fill its next window (2,000 images) are among those timed. Medians of `rounds` of each p95.
 * Usage: npx tsx bench/qc-next-image.ts [images=1000000] [requests=2000] [rounds=3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Caller } from '../src/access/caller.js';
import type { ProjectAccess } from '../src/access/project-access.js';
import { openDatabase } from '../src/db/database.js';
import { QualityControlRepository } from '../src/modules/quality-control/quality-control.repository.js';
import { QUEUE_WINDOW } from '../src/modules/quality-control/overlap-queue.repository.js';
import { QualityControlService } from '../src/modules/quality-control/quality-control.service.js';
import type { AnnotationsService } from '../src/modules/annotations/annotations.service.js';
import { percentile } from './lib/server.js';

const imageCount = Number(process.argv[2] ?? 1_000_000);
const requests = Number(process.argv[3] ?? 2000);
const rounds = Number(process.argv[4] ?? 3);
const ANNOTATORS = 20;
const NOW = '2026-12-02T00:00:00.000Z';

const dataDir = mkdtempSync(join(tmpdir(), 'versa-qc-next-'));
const handle = await openDatabase({ dataDir, databaseUrl: null });
const db = handle.db;
try {
  const users: number[] = [];
  for (let i = 0; i < ANNOTATORS; i++) {
    users.push((await db.insertInto('users').values({ email: `a${i}@bench`, password_hash: '-', display_name: `a${i}`, is_admin: 0, created_at: NOW }).returning('id').executeTakeFirstOrThrow()).id);
  }
  const projectId = (await db.insertInto('projects').values({ owner_id: users[0], name: 'qc next', description: '', project_type: 'detection', location: '', created_at: NOW, updated_at: NOW }).returning('id').executeTakeFirstOrThrow()).id;
  let t0 = performance.now();
  await sql`insert into images (project_id, filename, original_name, width, height, split, sha256, mime_type, size_bytes, blob_key, thumbnail_key, created_at)
    select ${projectId}, 'img' || i || '.jpg', 'img' || i || '.jpg', 1280, 960, 'train', printf('%064x', i), 'image/jpeg', 1000, 'missing', 'missing', ${NOW}
    from (with recursive s(i) as (select 1 union all select i + 1 from s where i < ${imageCount}) select i from s)`.execute(db);
  await sql`update projects set image_count = ${imageCount} where id = ${projectId}`.execute(db);
  await sql`analyze`.execute(db);
  console.log(`seeded ${imageCount} images in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const repo = new QualityControlRepository(db);
  const access = { project: async () => ({ id: projectId }) } as unknown as ProjectAccess;
  const service = new QualityControlService(repo, access, null as unknown as AnnotationsService, async () => [], () => false);
  const caller = (userId: number) => ({ userId, email: '', isAdmin: false, tokenId: 0, tokenKind: 'api', scope: 'read-write' }) as unknown as Caller;
  const submit = (taskId: number) => db.updateTable('qc_tasks').set({ status: 'submitted', submitted_at: NOW }).where('id', '=', taskId).execute();

  /**
   * One request as it would be without the overlap queue, at its cheapest: the caller's open task, else the image
   * after the last one dealt (id order, a cursor kept in memory: one annotator per image), dealt.
   */
  let cursor = 0;
  const bare = (userId: number) => repo.dealing(projectId, async (tx) => {
    const open = await repo.openTask(projectId, userId, tx);
    if (open) return open;
    const row = await tx.selectFrom('images').select('images.id').where('images.project_id', '=', projectId).where('images.id', '>', cursor)
      .where('images.review_state', '=', 'unreviewed').orderBy('images.id').limit(1).executeTakeFirstOrThrow();
    cursor = row.id;
    return repo.createTask(projectId, row.id, userId, NOW, tx);
  });
  const overlap = async (userId: number) => (await service.next(caller(userId), projectId)).task!;
  /** The order computed per request, as before migration 0040 (a handful: each sorts every image). */
  const computed = (userId: number) => db.selectFrom('images').select('images.id').where('images.project_id', '=', projectId).where('images.review_state', '=', 'unreviewed')
    .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_tasks').select('qc_tasks.id').whereRef('qc_tasks.image_id', '=', 'images.id').where('qc_tasks.user_id', '=', userId))))
    .where((eb) => eb(eb.selectFrom('qc_tasks').select((e) => e.fn.countAll<number>().as('n')).whereRef('qc_tasks.image_id', '=', 'images.id'), '<', 3))
    .orderBy(sql`((images.id * 2654435761) % 4294967291)`).orderBy('images.id').limit(1).executeTakeFirst();

  async function timed(deal: (userId: number) => Promise<{ id: number }>, n: number): Promise<number[]> {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const userId = users[i % users.length];
      const start = performance.now();
      const task = await deal(userId);
      ms.push(performance.now() - start);
      await submit(task.id);
    }
    return ms.sort((a, b) => a - b);
  }

  await service.updateSettings(caller(users[0]), projectId, { overlap: 3 });
  t0 = performance.now();
  await repo.dealing(projectId, (tx) => repo.topUpQueue(projectId, 3, tx));
  console.log(`one window of the queue (${QUEUE_WINDOW} shuffle keys) filled in ${(performance.now() - t0).toFixed(1)} ms`);
  const plan = await sql<{ detail: string }>`explain query plan select qc_queue.image_id from qc_queue inner join images on images.id = qc_queue.image_id
    where qc_queue.project_id = ${projectId} and images.review_state = 'unreviewed'
    and not exists (select 1 from qc_ground_truth where qc_ground_truth.image_id = qc_queue.image_id)
    and not exists (select 1 from qc_decisions where qc_decisions.project_id = ${projectId} and qc_decisions.image_id = qc_queue.image_id)
    and not exists (select 1 from qc_tasks where qc_tasks.image_id = qc_queue.image_id and qc_tasks.user_id = ${users[0]})
    order by qc_queue.shuffle_key, qc_queue.image_id limit 1`.execute(db);
  console.log(`plan of the queue's query: ${plan.rows.map((r) => r.detail).join('; ')}`);
  const before = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await computed(users[i]);
    before.push(performance.now() - start);
  }
  console.log(`before (order computed per request): ${before.map((x) => x.toFixed(0)).join(' / ')} ms`);

  const results: { bare: number; overlap: number; bare50: number; overlap50: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    await db.deleteFrom('qc_tasks').execute();
    cursor = 0;
    const b = await timed(bare, requests);
    await db.deleteFrom('qc_tasks').execute();
    // Starts from an empty queue each round (the tasks are gone): its windows are filled by the timed requests.
    await repo.dealing(projectId, (tx) => repo.resetQueue(projectId, tx));
    const o = await timed(overlap, requests);
    const r = { bare: percentile(b, 95), overlap: percentile(o, 95), bare50: percentile(b, 50), overlap50: percentile(o, 50) };
    results.push(r);
    console.log(`round ${round + 1}: p95 bare ${r.bare.toFixed(3)} ms, overlap ${r.overlap.toFixed(3)} ms (+${(r.overlap - r.bare).toFixed(3)} ms); p50 ${r.bare50.toFixed(3)} / ${r.overlap50.toFixed(3)} ms`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const mb = median(results.map((r) => r.bare));
  const mo = median(results.map((r) => r.overlap));
  console.log(`median p95 over ${rounds} rounds of ${requests} requests: bare ${mb.toFixed(3)} ms, overlap ${mo.toFixed(3)} ms, added ${(mo - mb).toFixed(3)} ms (ratio ${(mo / mb).toFixed(2)}x); target: added < 1 ms`);
} finally {
  await handle.close();
  rmSync(dataDir, { recursive: true, force: true });
}
