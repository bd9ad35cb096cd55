import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { ProfilePartsRepository } from '../../src/modules/profile/profile-parts.repository.js';
import { ProfileRepository } from '../../src/modules/profile/profile.repository.js';
import { DatasetProfiler } from '../../src/modules/profile/dataset-profile.service.js';
import { ProjectRevisionsRepository } from '../../src/modules/profile/project-revisions.repository.js';
import { projectTestDatabase, type ProjectTestDatabase } from '../helpers/test-app.js';

/** A profile repository that records the parts it computes, and may write to the project while it does. */
class RecordingRepository extends ProfileRepository {
  computed: number[] = [];
  during?: () => Promise<unknown>;
  override async imageParts(projectId: number, first: number, last: number) {
    const parts = await super.imageParts(projectId, first, last);
    this.computed.push(...parts.keys());
    const write = this.during;
    this.during = undefined;
    await write?.();
    return parts;
  }
}

/**
 * The profile is the sum of parts of 1,024 image ids, each kept at its revision: after a change only the parts it
 * touched are computed again, and the profile always equals one computed from nothing.
 */
describe('profile parts', () => {
  let opened: ProjectTestDatabase;
  let db: Db;
  let repository: RecordingRepository;
  let profiles: DatasetProfiler;
  let project: number;
  const classes: number[] = [];
  const now = new Date().toISOString();

  /** The profile from nothing: a service that has kept nothing. */
  const fromNothing = () => new DatasetProfiler(new ProfileRepository(db), new ProjectRevisionsRepository(db)).profile(project, 'image');
  /** The kept service's profile, which must equal the one from nothing; returns the parts it computed. */
  const profiled = async (): Promise<number[]> => {
    repository.computed = [];
    const profile = await profiles.profile(project, 'image');
    assert.deepEqual(profile, await fromNothing());
    return repository.computed.sort((a, b) => a - b);
  };
  const annotate = (imageId: number, classIndex: number, x: number) =>
    db.insertInto('annotations').values({ image_id: imageId, project_id: project, class_id: classes[classIndex], annotation_type: 'bbox', geometry: JSON.stringify({ x, y: 10, width: 40, height: 30 }), confidence: null, source: 'manual', created_at: now, updated_at: now }).execute();

  before(async () => {
    opened = await projectTestDatabase('versa-profile-parts');
    db = opened.db;
    repository = new RecordingRepository(db);
    profiles = new DatasetProfiler(repository, new ProjectRevisionsRepository(db), undefined, new ProfilePartsRepository(db));
    project = await opened.newProject();
    for (const name of ['cat', 'dog']) classes.push((await db.insertInto('classes').values({ project_id: project, name, color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow()).id);
    // Images in parts 0, 1 and 4 (ids 100…, 1100…, 5000…), two annotations each.
    for (const first of [100, 1_100, 5_000]) {
      for (let id = first; id < first + 6; id++) {
        await db.insertInto('images').values({
          id, project_id: project, filename: `${id}.png`, original_name: `${id}.png`, width: 200 + (id % 3) * 100, height: 200, split: id % 2 ? 'train' : 'valid', sha256: `s${id}`,
          mime_type: 'image/png', size_bytes: 1, blob_key: `b/${id}`, thumbnail_key: `t/${id}`, annotation_count: 2, created_at: now,
        }).execute();
        await annotate(id, id % 2, 5);
        await annotate(id, 0, 120);
      }
    }
  });
  after(() => opened.close());

  it('computes every part once, then keeps them', async () => {
    const first = await profiles.profile(project, 'image');
    assert.equal(first.totals.images, 18);
    assert.equal(first.totals.annotations, 36);
    assert.equal(first.classes.find((c) => c.name === 'cat')!.images, 18);
    assert.equal(await profiled().then((r) => r.length), 0, 'nothing changed: nothing computed');
  });

  it('computes only the parts a change touched', async () => {
    await annotate(1_103, 1, 60);
    assert.deepEqual(await profiled(), [1]);
    await db.updateTable('images').set({ split: 'test' }).where('id', '=', 5_003).execute();
    await db.deleteFrom('annotations').where('image_id', '=', 100).execute();
    assert.deepEqual(await profiled(), [0, 4]);
    await annotate(101, 0, 60);
    await annotate(1_101, 0, 60);
    assert.deepEqual(await profiled(), [0, 1]);
    await db.updateTable('classes').set({ name: 'kitten' }).where('id', '=', classes[0]).execute();
    assert.deepEqual(await profiled(), [], 'a renamed class touches no image part');
    await db.deleteFrom('images').where('id', '>=', 5_000).execute();
    assert.deepEqual(await profiled(), [], 'an emptied part has no images to compute');
    assert.equal((await profiles.profile(project, 'image')).totals.images, 12);
  });

  it('does not keep a part that changed while it was computed', async () => {
    repository.during = () => annotate(1_102, 1, 80);
    repository.computed = [];
    await db.updateTable('images').set({ split: 'valid' }).where('id', '=', 1_104).execute();
    const during = await profiles.profile(project, 'image');
    assert.deepEqual(repository.computed, [1]);
    assert.notEqual(during.totals.annotations, (await fromNothing()).totals.annotations, 'the write came after the part was read');
    assert.deepEqual(await profiled(), [1], 'the part is computed again, not handed out stale');
  });

  it('keeps the parts in the database: a restarted server computes only what changed since', async () => {
    await profiled();
    const restarted = () => new DatasetProfiler(repository, new ProjectRevisionsRepository(db), undefined, new ProfilePartsRepository(db));
    repository.computed = [];
    assert.deepEqual(await restarted().profile(project, 'image'), await fromNothing());
    assert.deepEqual(repository.computed, [], 'every part comes from the database');

    await annotate(105, 1, 30);
    repository.computed = [];
    assert.deepEqual(await restarted().profile(project, 'image'), await fromNothing(), 'a part stored before a change is not handed out');
    assert.deepEqual(repository.computed, [0]);
    const stored = await db.selectFrom('profile_parts').select('part').where('project_id', '=', project).execute();
    assert.deepEqual(stored.map((r) => r.part).sort((a, b) => a - b), [-1, 0, 1, 4], 'the project part and every image part (part 4, emptied, as an empty part)');
  });
});

