import { sql, type ExpressionBuilder, type Insertable, type Selectable } from 'kysely';
import { BulkInsert } from '../../db/bulk-insert.js';
import type { Db, Executor } from '../../db/database.js';
import { PreparedQuery } from '../../db/prepared-query.js';
import type { Database, ReviewState, SampleModality, SampleRevisionAction, SamplesTable } from '../../db/schema.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { SplitName } from '../../lib/vocabulary.js';
import { chunks } from '../../lib/batches.js';

export type SampleRow = Selectable<SamplesTable>;
export type SampleInsert = Insertable<SamplesTable>;
/** The columns a label edit sets. */
export type LabelColumns = Pick<SampleRow, 'label' | 'labels' | 'spans' | 'value' | 'labelled' | 'split'>;
type RevisionValues = {
  sample_id: number;
  project_id: number;
  before: string;
  after: string;
  user_id: number;
  created_at: string;
};

export interface SampleFilters {
  modality?: SampleModality;
  split?: SplitName;
  label?: string;
  /** A user id, or null for samples assigned to nobody. */
  assignee?: number | null;
  review_state?: ReviewState;
  /** Ground-truth samples count as unlabelled and unreviewed (a caller they are hidden from, issue 29). */
  hideGroundTruth?: boolean;
}

/** A revision of a sample other than a label edit (assignment, submission, review decision). */
export interface SampleEvent {
  sample_id: number;
  action: Exclude<SampleRevisionAction, 'update'>;
  before: unknown;
  after: unknown;
}

/** The review columns a submission or a decision sets. */
export type ReviewColumns = Pick<SampleRow, 'review_state' | 'review_comment' | 'reviewed_by' | 'reviewed_at'>;

/** Every column an insert writes (the others take their defaults). */
const INSERT_COLUMNS = [
  'project_id', 'modality', 'split', 'data', 'label', 'labels', 'spans', 'value', 'metadata', 'labelled', 'blob_key', 'sha256', 'created_at', 'updated_at',
] as const satisfies readonly (keyof SampleInsert)[];

const ID_CHUNK = 500;


/** A LIKE pattern matching the JSON string of `name` inside a JSON list, with LIKE's wildcards escaped. */
const jsonListPattern = (name: string) => `%${JSON.stringify(name).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export class SamplesRepository {
  constructor(
    private readonly db: Db,
    private readonly projects: ProjectsRepository,
  ) {
    this.bulkInsert = new BulkInsert(db, 'samples', INSERT_COLUMNS, ['id']);
    this.className = new PreparedQuery(db, ['projectId', 'name'], (p) =>
      db.selectFrom('classes').select('name').where('project_id', '=', p.projectId).where('name', '=', p.name));
    this.updateLabels = new PreparedQuery(db, ['id', 'label', 'labels', 'spans', 'value', 'labelled', 'split', 'updated_at'], (p) =>
      db
        .updateTable('samples')
        .set({ label: p.label, labels: p.labels, spans: p.spans, value: p.value, labelled: p.labelled, split: p.split, updated_at: p.updated_at })
        .where('id', '=', p.id)
        .returningAll());
    this.revision = new PreparedQuery<RevisionValues, { id: number }>(db, ['sample_id', 'project_id', 'before', 'after', 'user_id', 'created_at'], (p) =>
      db
        .insertInto('sample_revisions')
        .values({ sample_id: p.sample_id, project_id: p.project_id, before: p.before, after: p.after, user_id: p.user_id, created_at: p.created_at, action: 'update' })
        .returning('id'));
  }

  private readonly bulkInsert: BulkInsert<'samples', (typeof INSERT_COLUMNS)[number], 'id'>;
  /** Prepared once: a PATCH (the hot path) asks them. */
  private readonly className: PreparedQuery<{ projectId: number; name: string }, { name: string }>;
  private readonly updateLabels: PreparedQuery<LabelColumns & { id: number; updated_at: string }, SampleRow>;
  private readonly revision: PreparedQuery<RevisionValues, { id: number }>;

  /** One page in id order; `after` seeks through the (project_id[, filter], id) indexes. */
  listPage(projectId: number, filters: SampleFilters, page: { limit: number; offset?: number; after?: number }): Promise<SampleRow[]> {
    let query = this.filtered(projectId, filters).selectAll();
    if (page.after !== undefined) query = query.where('id', '>', page.after);
    query = query.orderBy('id').limit(page.limit);
    if (page.offset) query = query.offset(page.offset);
    return query.execute();
  }

  async count(projectId: number, filters: SampleFilters): Promise<number> {
    const row = await this.filtered(projectId, filters).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  private filtered(projectId: number, filters: SampleFilters) {
    let query = this.db.selectFrom('samples').where('project_id', '=', projectId);
    if (filters.modality) query = query.where('modality', '=', filters.modality);
    if (filters.split) query = query.where('split', '=', filters.split);
    const groundTruth = (eb: ExpressionBuilder<Database, 'samples'>) => eb('samples.id', 'in', eb.selectFrom('qc_sample_ground_truth').select('qc_sample_ground_truth.sample_id').where('qc_sample_ground_truth.project_id', '=', projectId));
    // Hidden ground truth (issue 29) has no label and is unreviewed for the caller.
    const hide = filters.hideGroundTruth === true;
    if (filters.label !== undefined) {
      const name = filters.label;
      query = query.where((eb) => eb.or([eb('label', '=', name), eb.and([eb('labels', 'is not', null), sql<boolean>`labels like ${jsonListPattern(name)} escape '\\'`])]));
      if (hide) query = query.where((eb) => eb.not(groundTruth(eb)));
    }
    if (filters.assignee !== undefined) query = filters.assignee === null ? query.where('assignee_id', 'is', null) : query.where('assignee_id', '=', filters.assignee);
    if (filters.review_state) {
      const state = filters.review_state;
      query = !hide ? query.where('review_state', '=', state)
        : state === 'unreviewed' ? query.where((eb) => eb.or([eb('review_state', '=', state), groundTruth(eb)]))
        : query.where('review_state', '=', state).where((eb) => eb.not(groundTruth(eb)));
    }
    return query;
  }

  /** The samples of the project among `ids`, with their assignees. */
  async assigneesOf(projectId: number, ids: number[]): Promise<Map<number, number | null>> {
    const out = new Map<number, number | null>();
    for (const chunk of chunks(ids, ID_CHUNK)) {
      const rows = await this.db.selectFrom('samples').select(['id', 'assignee_id']).where('project_id', '=', projectId).where('id', 'in', chunk).execute();
      for (const r of rows) out.set(r.id, r.assignee_id);
    }
    return out;
  }

  /** The oldest samples of the project (of a modality) that nobody is assigned. */
  async unassigned(projectId: number, count: number, modality?: SampleModality): Promise<number[]> {
    let query = this.db.selectFrom('samples').select('id').where('project_id', '=', projectId).where('assignee_id', 'is', null);
    if (modality) query = query.where('modality', '=', modality);
    return (await query.orderBy('id').limit(count).execute()).map((r) => r.id);
  }

  /**
   * Sets the assignee of the samples and records each change as a revision, in one transaction. Each row changes only
   * while its assignee still is the one read before (`before`): false, and nothing changed, when another request moved
   * one meanwhile.
   */
  assign(projectId: number, changes: { id: number; before: number | null }[], assigneeId: number | null, userId: number): Promise<boolean> {
    const now = new Date().toISOString();
    const byBefore = new Map<number | null, number[]>();
    for (const c of changes) byBefore.set(c.before, [...(byBefore.get(c.before) ?? []), c.id]);
    return this.db.transaction().execute(async (trx) => {
      for (const [before, ids] of byBefore) {
        for (const chunk of chunks(ids, ID_CHUNK)) {
          const query = trx.updateTable('samples').set({ assignee_id: assigneeId }).where('project_id', '=', projectId).where('id', 'in', chunk);
          const moved = await (before === null ? query.where('assignee_id', 'is', null) : query.where('assignee_id', '=', before)).executeTakeFirst();
          if (Number(moved.numUpdatedRows) !== chunk.length) throw new AssignedMeanwhile();
          await trx
            .insertInto('sample_revisions')
            .values(chunk.map((id) => ({
              sample_id: id,
              project_id: projectId,
              action: 'assign' as const,
              before: JSON.stringify({ assignee_id: before }),
              after: JSON.stringify({ assignee_id: assigneeId }),
              user_id: userId,
              created_at: now,
            })))
            .execute();
        }
      }
      return true;
    }).catch((err: unknown) => {
      if (err instanceof AssignedMeanwhile) return false;
      throw err;
    });
  }

  /**
   * Moves a sample's review columns on when its state still is (`from`) or is not (`notFrom`) the one the caller
   * read, and records the revision, in one transaction; undefined when another request moved it first.
   */
  setReview(sample: SampleRow, guard: { from: ReviewState } | { notFrom: ReviewState }, values: Partial<ReviewColumns>, event: SampleEvent, userId: number): Promise<SampleRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      let query = trx.updateTable('samples').set(values).where('id', '=', sample.id);
      query = 'from' in guard ? query.where('review_state', '=', guard.from) : query.where('review_state', '!=', guard.notFrom);
      const row = await query.returningAll().executeTakeFirst();
      if (!row) return undefined;
      await trx
        .insertInto('sample_revisions')
        .values({ sample_id: sample.id, project_id: sample.project_id, action: event.action, before: JSON.stringify(event.before), after: JSON.stringify(event.after), user_id: userId, created_at: new Date().toISOString() })
        .execute();
      return row;
    });
  }

  /** Inserts samples in order (ids follow it) and adds them to the project's counters, in the caller's transaction. */
  async insertMany(projectId: number, rows: SampleInsert[], db: Executor): Promise<SampleRow[]> {
    const ids = await this.insertManyIds(projectId, rows, db);
    const stored = new Map<number, SampleRow>();
    for (const chunk of chunks(ids, ID_CHUNK)) for (const row of await db.selectFrom('samples').selectAll().where('id', 'in', chunk).execute()) stored.set(row.id, row);
    return ids.map((id) => stored.get(id)!);
  }

  /** Inserts through the one bulk path (see BulkInsert), answering the new ids in the order of `rows`. */
  async insertManyIds(projectId: number, rows: SampleInsert[], db: Executor): Promise<number[]> {
    const ids = (await this.bulkInsert.run(rows.map((row) => Object.fromEntries(INSERT_COLUMNS.map((c) => [c, row[c] ?? null])) as Record<(typeof INSERT_COLUMNS)[number], unknown>), db)).map((r) => r.id);
    await this.bumpCounters(projectId, rows, db);
    return ids;
  }

  private async bumpCounters(projectId: number, rows: SampleInsert[], db: Executor) {
    let labelled = 0;
    for (const row of rows) labelled += row.labelled ?? 0;
    await this.projects.bumpCounters(projectId, { sample_count: rows.length, labelled_sample_count: labelled }, db);
  }

  /** Deletes samples of a project (an import undoing itself) and takes them off the counters; returns their blob keys. */
  async deleteMany(projectId: number, ids: number[]): Promise<string[]> {
    const keys: string[] = [];
    for (const chunk of chunks(ids, ID_CHUNK)) {
      await this.db.transaction().execute(async (trx) => {
        const gone = await trx.deleteFrom('samples').where('project_id', '=', projectId).where('id', 'in', chunk).returning(['labelled', 'blob_key']).execute();
        for (const g of gone) if (g.blob_key) keys.push(g.blob_key);
        const labelled = gone.reduce((n, g) => n + g.labelled, 0);
        await this.projects.bumpCounters(projectId, { sample_count: -gone.length, labelled_sample_count: -labelled }, trx);
      });
    }
    return keys;
  }

  /**
   * Sets a sample's labels and split (all of them: the statement is prepared once) and keeps the project's labelled
   * counter in step.
   */
  async update(sample: SampleRow, values: LabelColumns, db: Executor): Promise<SampleRow> {
    const row = (await this.updateLabels.run({ ...values, id: sample.id, updated_at: new Date().toISOString() }, db)).rows[0];
    if (row.labelled !== sample.labelled) await this.projects.bumpCounters(sample.project_id, { labelled_sample_count: row.labelled - sample.labelled }, db);
    return row;
  }

  /** Every sample's id and labels (stratified splits), optionally of one modality, in id order. */
  labelsOf(projectId: number, modality?: SampleModality): Promise<Pick<SampleRow, 'id' | 'label' | 'labels' | 'value'>[]> {
    let query = this.db.selectFrom('samples').select(['id', 'label', 'labels', 'value']).where('project_id', '=', projectId);
    if (modality) query = query.where('modality', '=', modality);
    return query.orderBy('id').execute();
  }

  /** Samples per split (`null`: in no split), optionally of one modality. */
  async splitCounts(projectId: number, modality?: SampleModality): Promise<Map<SplitName | null, number>> {
    let query = this.db.selectFrom('samples').select((eb) => ['split', eb.fn.countAll<number>().as('n')]).where('project_id', '=', projectId);
    if (modality) query = query.where('modality', '=', modality);
    const rows = await query.groupBy('split').execute();
    return new Map(rows.map((row) => [row.split as SplitName | null, Number(row.n)]));
  }

  /** Sets splits by id, grouped by split so each statement updates many rows. */
  async setSplits(projectId: number, assignment: Map<number, SplitName>): Promise<void> {
    const bySplit = new Map<SplitName, number[]>();
    for (const [id, split] of assignment) bySplit.set(split, [...(bySplit.get(split) ?? []), id]);
    await this.db.transaction().execute(async (trx) => {
      for (const [split, ids] of bySplit) {
        for (const chunk of chunks(ids, ID_CHUNK)) {
          await trx.updateTable('samples').set({ split }).where('project_id', '=', projectId).where('id', 'in', chunk).execute();
        }
      }
    });
  }

  /** Streams a project's samples in id order, a page at a time (adapters read all of them). */
  async *iterate(projectId: number, modality?: SampleModality, pageSize = 2000): AsyncGenerator<SampleRow> {
    let after = 0;
    for (;;) {
      const rows = await this.listPage(projectId, { modality }, { limit: pageSize, after });
      for (const row of rows) yield row;
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1].id;
    }
  }

  shaInUse(projectId: number, sha256: string): Promise<boolean> {
    return this.db.selectFrom('samples').select('id').where('project_id', '=', projectId).where('sha256', '=', sha256).limit(1).executeTakeFirst().then((r) => r !== undefined);
  }

  /** The classes of the project by name; missing names are created in the given order with palette colours. */
  async ensureClasses(projectId: number, names: string[], color: (index: number) => string, db: Executor): Promise<{ created: string[] }> {
    const existing = new Set<string>();
    for (const chunk of chunks(names, ID_CHUNK)) {
      for (const r of await db.selectFrom('classes').select('name').where('project_id', '=', projectId).where('name', 'in', chunk).execute()) existing.add(r.name);
    }
    const missing = names.filter((n) => !existing.has(n));
    if (missing.length === 0) return { created: [] };
    const project = await this.projects.find(projectId, db);
    const now = new Date().toISOString();
    for (const chunk of chunks(missing, ID_CHUNK)) {
      await db.insertInto('classes').values(chunk.map((name, i) => ({ project_id: projectId, name, color: color(project!.class_count + i), created_at: now }))).execute();
    }
    await this.projects.bumpCounters(projectId, { class_count: missing.length }, db);
    return { created: missing };
  }

  /** Removes classes an import created and nothing uses (the import failed after creating them). */
  async deleteUnusedClasses(projectId: number, names: string[]): Promise<void> {
    for (const chunk of chunks(names, ID_CHUNK)) {
      await this.db.transaction().execute(async (trx) => {
        const gone = await trx
          .deleteFrom('classes')
          .where('project_id', '=', projectId)
          .where('name', 'in', chunk)
          .where((eb) => eb.not(eb.exists(eb.selectFrom('annotations').select('annotations.id').whereRef('annotations.class_id', '=', 'classes.id'))))
          .returning('id')
          .execute();
        await this.projects.bumpCounters(projectId, { class_count: -gone.length }, trx);
      });
    }
  }

  async classNamesIn(projectId: number, names: string[], db: Executor = this.db): Promise<string[]> {
    if (names.length === 1) return (await this.className.run({ projectId, name: names[0] }, db)).rows.map((r) => r.name);
    const rows = await db.selectFrom('classes').select('name').where('project_id', '=', projectId).where('name', 'in', names).execute();
    return rows.map((r) => r.name);
  }

  classNames(projectId: number): Promise<string[]> {
    return this.db.selectFrom('classes').select('name').where('project_id', '=', projectId).orderBy('id').execute().then((rows) => rows.map((r) => r.name));
  }

  /** Whether the project has a sample of the modality (with a value, when `valued`). */
  async hasSample(projectId: number, modality: SampleModality, valued = false): Promise<boolean> {
    let query = this.db.selectFrom('samples').select('id').where('project_id', '=', projectId).where('modality', '=', modality);
    if (valued) query = query.where('value', 'is not', null);
    return (await query.limit(1).executeTakeFirst()) !== undefined;
  }

  async findSchema(projectId: number, modality: SampleModality): Promise<unknown> {
    const row = await this.db.selectFrom('sample_schemas').select('schema').where('project_id', '=', projectId).where('modality', '=', modality).executeTakeFirst();
    return row ? JSON.parse(row.schema) : undefined;
  }

  async saveSchema(projectId: number, modality: SampleModality, schema: unknown, db: Executor = this.db): Promise<void> {
    await db
      .insertInto('sample_schemas')
      .values({ project_id: projectId, modality, schema: JSON.stringify(schema) })
      .onConflict((oc) => oc.columns(['project_id', 'modality']).doUpdateSet({ schema: JSON.stringify(schema) }))
      .execute();
  }

  async deleteSchema(projectId: number, modality: SampleModality): Promise<void> {
    await this.db.deleteFrom('sample_schemas').where('project_id', '=', projectId).where('modality', '=', modality).execute();
  }

  transaction<T>(work: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }

  // Label history of samples.

  async addRevision(values: Omit<RevisionValues, 'created_at'>, db: Executor): Promise<void> {
    await this.revision.run({ ...values, created_at: new Date().toISOString() }, db);
  }

  revisions(sampleId: number) {
    return this.db.selectFrom('sample_revisions').selectAll().where('sample_id', '=', sampleId).orderBy('id').execute();
  }
}

class AssignedMeanwhile extends Error {}
