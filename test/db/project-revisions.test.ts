import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { PART_BITS, PROJECT_PART } from '../../src/db/migrations/0019-project-revision-parts.js';
import { ProjectRevisionsRepository } from '../../src/modules/profile/project-revisions.repository.js';
import { projectTestDatabase, type ProjectTestDatabase } from '../helpers/test-app.js';

/**
 * Migrations 0018 and 0019: a project part's data revision grows with every committed change to its images,
 * annotations (their image's part), classes and samples (the project part), kept by the database's triggers (the
 * kept profile parts rely on it), and only that project's and part's.
 */
describe('project data revisions', () => {
  let opened: ProjectTestDatabase;
  let db: Db;
  let revisions: ProjectRevisionsRepository;
  let project: number;
  let other: number;
  const now = new Date().toISOString();

  const newClass = async (projectId: number, name: string) =>
    (await db.insertInto('classes').values({ project_id: projectId, name, color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
  const newImage = async (projectId: number, name: string, id?: number) =>
    (await db.insertInto('images').values({
      ...(id ? { id } : {}),
      project_id: projectId, filename: name, original_name: name, width: 10, height: 10, split: 'train', sha256: name, mime_type: 'image/png',
      size_bytes: 1, blob_key: `b/${name}`, thumbnail_key: `t/${name}`, annotation_count: 0, created_at: now,
    }).returning('id').executeTakeFirstOrThrow()).id;

  /** The sum of a project's part revisions. */
  const total = async (projectId: number) => [...(await revisions.parts(projectId)).values()].reduce((a, b) => a + b, 0);
  /** Runs `write` and returns how much the project's revision and the other project's grew. */
  async function growth(write: () => Promise<unknown>): Promise<[number, number]> {
    const [a, b] = [await total(project), await total(other)];
    await write();
    return [(await total(project)) - a, (await total(other)) - b];
  }
  /** `write` makes the project's revision grow in exactly the parts named, and no other project's. */
  const grows = async (what: string, parts: number[], write: () => Promise<unknown>) => {
    const before = await revisions.parts(project);
    const [mine, theirs] = await growth(write);
    const after = await revisions.parts(project);
    assert.ok(mine > 0, `${what}: the project's revision grows`);
    assert.equal(theirs, 0, `${what}: another project's does not`);
    const grown = [...after].filter(([part, revision]) => revision !== (before.get(part) ?? 0)).map(([part]) => part);
    assert.deepEqual(grown.sort((a, b) => a - b), parts, `${what}: the parts that grew`);
  };

  before(async () => {
    opened = await projectTestDatabase('versa-revisions');
    db = opened.db;
    revisions = new ProjectRevisionsRepository(db);
    project = await opened.newProject('p');
    other = await opened.newProject('q');
    await newClass(other, 'dog');
  });
  after(() => opened.close());

  it('grows with every insert, update and delete of the project\'s classes, images, annotations and samples', async () => {
    let cls = 0;
    let image = 0;
    await grows('class created', [PROJECT_PART], async () => (cls = await newClass(project, 'cat')));
    await grows('class renamed', [PROJECT_PART], () => db.updateTable('classes').set({ name: 'kitten' }).where('id', '=', cls).execute());
    // An image of the third part: ids 2048…3071.
    image = await newImage(project, 'a.png', 2_500);
    const part = 2_500 >> PART_BITS;
    assert.ok((await revisions.parts(project)).get(part)! > 0, 'image added: its part has a revision');
    await grows('split changed', [part], () => db.updateTable('images').set({ split: 'valid' }).where('id', '=', image).execute());
    let annotation = 0;
    await grows('annotation added', [part], async () => {
      annotation = (await db.insertInto('annotations').values({ image_id: image, project_id: project, class_id: cls, annotation_type: 'bbox', geometry: '{"x":1,"y":1,"width":2,"height":2}', confidence: null, source: 'manual', created_at: now, updated_at: now })
        .returning('id').executeTakeFirstOrThrow()).id;
    });
    await grows('annotation moved', [part], () => db.updateTable('annotations').set({ geometry: '{"x":2,"y":1,"width":2,"height":2}' }).where('id', '=', annotation).execute());
    await grows('annotation deleted', [part], () => db.deleteFrom('annotations').where('id', '=', annotation).execute());
    let sample = 0;
    await grows('sample added', [PROJECT_PART], async () => {
      sample = (await db.insertInto('samples').values({ project_id: project, modality: 'text', split: null, data: '{"text":"hi"}', label: null, labels: null, spans: null, value: null, metadata: null, blob_key: null, sha256: null, assignee_id: null, created_at: now, updated_at: now })
        .returning('id').executeTakeFirstOrThrow()).id;
    });
    await grows('sample labelled', [PROJECT_PART], () => db.updateTable('samples').set({ label: 'greeting' }).where('id', '=', sample).execute());
    await grows('sample deleted', [PROJECT_PART], () => db.deleteFrom('samples').where('id', '=', sample).execute());
    await grows('image deleted', [part], () => db.deleteFrom('images').where('id', '=', image).execute());
    await grows('class deleted', [PROJECT_PART], () => db.deleteFrom('classes').where('id', '=', cls).execute());
  });

  it('counts rows moved from one project to another for both', async () => {
    const image = await newImage(other, 'moved.png');
    const [mine, theirs] = await growth(() => db.updateTable('images').set({ project_id: project }).where('id', '=', image).execute());
    assert.ok(mine > 0 && theirs > 0, `both projects' revisions grow (${mine}, ${theirs})`);
  });

  it('keeps its value when a read folds the rows, and leaves no rows behind a deleted project', async () => {
    for (let i = 0; i < 80; i++) await newClass(project, `c${i}`);
    const first = await revisions.parts(project);
    assert.deepEqual(await revisions.parts(project), first, 'a read (which folds PostgreSQL\'s rows) does not change the revisions');
    const rows = await db.selectFrom('project_revisions').select('part').where('project_id', '=', project).execute();
    assert.equal(rows.length, new Set(rows.map((r) => r.part)).size, 'one row per part after a read');
    // Rows nobody reads: folded by the periodic foldAll, which keeps the sum.
    for (let i = 0; i < 80; i++) await newClass(other, `d${i}`);
    const stored = () => db.selectFrom('project_revisions').select(['part', 'revision']).where('project_id', '=', other).execute();
    const sums = (rows: { part: number; revision: number | string }[]) => {
      const byPart = new Map<number, number>();
      for (const r of rows) byPart.set(r.part, (byPart.get(r.part) ?? 0) + Number(r.revision));
      return byPart;
    };
    const before = await stored();
    assert.equal(await revisions.foldAll(), before.length > 64 ? 1 : 0, 'the crowded project is folded (PostgreSQL keeps a row per statement, SQLite one per part)');
    const after = await stored();
    assert.equal(after.length, 2, 'one row for each of its two parts (its classes, the image that left it)');
    assert.deepEqual(sums(after), sums(before), 'folding keeps each part\'s revision');
    await db.deleteFrom('projects').where('id', '=', project).execute();
    assert.equal((await db.selectFrom('project_revisions').select('project_id').where('project_id', '=', project).execute()).length, 0);
    assert.ok((await total(other)) > 0);
  });
});
