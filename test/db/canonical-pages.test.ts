import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { CanonicalRepository } from '../../src/modules/canonical/canonical.repository.js';
import { CanonicalService } from '../../src/modules/canonical/canonical.service.js';
import { projectTestDatabase, type ProjectTestDatabase } from '../helpers/test-app.js';

/**
 * The canonical stream lays its pages out first and reads them ahead (PostgreSQL on parallel connections): every
 * image once, in id order, whatever is deleted or added while it streams.
 */
describe('canonical export pages', () => {
  let opened: ProjectTestDatabase;
  let db: Db;
  let project: number;
  const now = new Date().toISOString();
  const access = { wholeProject: async () => ({}) } as never;

  const addImage = async (name: string, split = 'train') =>
    (await db.insertInto('images').values({
      project_id: project, filename: name, original_name: name, width: 4, height: 3, split, sha256: name, mime_type: 'image/png',
      size_bytes: 1, blob_key: `b/${name}`, thumbnail_key: `t/${name}`, annotation_count: 0, created_at: now,
    }).returning('id').executeTakeFirstOrThrow()).id;
  /** The image ids of the stream, in order. */
  const streamed = async (service: CanonicalService, split?: string) => {
    const { body } = await service.stream({} as never, project, { ...(split ? { split } : {}) } as never);
    let text = '';
    for await (const chunk of body) text += chunk;
    return text.trim().split('\n').map((line) => JSON.parse(line).metadata.image_id as number);
  };

  before(async () => {
    opened = await projectTestDatabase('versa-canonical-pages');
    db = opened.db;
    project = await opened.newProject();
    for (let i = 0; i < 11; i++) await addImage(`${i}.png`, i % 3 === 0 ? 'valid' : 'train');
  });
  after(() => opened.close());

  const allIds = async (split?: string) => {
    let q = db.selectFrom('images').select('id').where('project_id', '=', project);
    if (split) q = q.where('split', '=', split);
    return (await q.orderBy('id').execute()).map((r) => r.id);
  };

  it('lays out pages of the project\'s ids', async () => {
    const ids = await allIds();
    assert.deepEqual(await new CanonicalRepository(db).pageStarts(project, 3, undefined), [0, ids[2], ids[5], ids[8]]);
    const valid = await allIds('valid');
    assert.deepEqual(await new CanonicalRepository(db).pageStarts(project, 2, 'valid'), [0, valid[1], valid[3]]);
  });

  it('streams every image once, in order, over pages of two and three', async () => {
    for (const size of [2, 3, 11, 100]) {
      assert.deepEqual(await streamed(new CanonicalService(access, new CanonicalRepository(db), undefined, size)), await allIds(), `pages of ${size}`);
    }
    assert.deepEqual(await streamed(new CanonicalService(access, new CanonicalRepository(db), undefined, 2), 'valid'), await allIds('valid'));
  });

  it('streams the images added and leaves out those deleted after the layout, each once', async () => {
    const repository = new CanonicalRepository(db);
    const layout = repository.pageStarts.bind(repository);
    const deleted = (await allIds())[4];
    repository.pageStarts = async (...args) => {
      const starts = await layout(...args);
      // After the layout, before any page is read.
      for (let i = 0; i < 5; i++) await addImage(`late-${i}.png`);
      await db.deleteFrom('images').where('id', '=', deleted).execute();
      return starts;
    };
    const ids = await streamed(new CanonicalService(access, repository, undefined, 2));
    assert.deepEqual(ids, await allIds(), 'the five added images come after the others (keyset pages on from the last page)');
    assert.ok(!ids.includes(deleted));
  });
});
