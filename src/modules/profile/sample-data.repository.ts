import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { SampleModality } from '../../db/schema.js';
import { jsonText } from '../../db/sql-json.js';

/** What a quality check reads of a sample. */
export interface SampleChunkRow {
  id: number;
  split: string | null;
  data: string;
  label: string | null;
  labels: string | null;
  value: string | null;
}

/** The tabular layout the first tabular import fixed (sample_schemas), as far as quality reads it. */
export interface TabularLayout {
  target: string;
  task: 'classification' | 'regression';
  /** Every column in file order, the target included. */
  columns: [string, string][];
}

/**
 * The reads of samples the profile, the readiness rules and the quality checks share: counts and label aggregates in SQL, and keyset pages (by id, along the
 * (project_id, modality, id) and (project_id, split, id) indexes) for what has to look at each sample.
 */
export class SampleDataRepository {
  constructor(private readonly db: Db) {}

  async modalityCounts(projectId: number): Promise<Map<SampleModality, number>> {
    const rows = await this.db
      .selectFrom('samples')
      .select(['modality', (eb) => eb.fn.countAll<number>().as('n')])
      .where('project_id', '=', projectId)
      .groupBy('modality')
      .execute();
    return new Map(rows.map((r) => [r.modality, Number(r.n)]));
  }

  /** Samples and labelled samples per modality and split. */
  async splitCounts(projectId: number, modality?: SampleModality): Promise<{ modality: SampleModality; split: string | null; samples: number; labelled: number }[]> {
    let query = this.db
      .selectFrom('samples')
      .select(['modality', 'split', (eb) => eb.fn.countAll<number>().as('samples'), (eb) => eb.fn.sum<number>('labelled').as('labelled')])
      .where('project_id', '=', projectId);
    if (modality) query = query.where('modality', '=', modality);
    const rows = await query.groupBy(['modality', 'split']).execute();
    return rows.map((r) => ({ modality: r.modality, split: r.split, samples: Number(r.samples), labelled: Number(r.labelled ?? 0) }));
  }

  /** Samples per class (a multi-label sample counts under its first class), modality and split. */
  async labelCounts(projectId: number, modality?: SampleModality): Promise<{ modality: SampleModality; label: string; split: string | null; samples: number }[]> {
    let query = this.db
      .selectFrom('samples')
      .select(['modality', 'label', 'split', (eb) => eb.fn.countAll<number>().as('samples')])
      .where('project_id', '=', projectId)
      .where('label', 'is not', null);
    if (modality) query = query.where('modality', '=', modality);
    const rows = await query.groupBy(['modality', 'label', 'split']).orderBy('label').execute();
    return rows.map((r) => ({ modality: r.modality, label: r.label!, split: r.split, samples: Number(r.samples) }));
  }

  /**
   * Values of a modality's samples: how many look like JSON numbers, and how many distinct ones there are
   * (the readiness of a regression target).
   */
  async numericValues(projectId: number, modality: SampleModality): Promise<{ numbers: number; distinct: number }> {
    const numeric = sql<boolean>`substr(value, 1, 1) in ('-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9')`;
    const row = await this.db
      .selectFrom('samples')
      .select([(eb) => eb.fn.countAll<number>().as('numbers'), sql<number>`count(distinct value)`.as('distinct')])
      .where('project_id', '=', projectId)
      .where('modality', '=', modality)
      .where('value', 'is not', null)
      .where(numeric)
      .executeTakeFirstOrThrow();
    return { numbers: Number(row.numbers), distinct: Number(row.distinct) };
  }

  async tabularLayout(projectId: number): Promise<TabularLayout | undefined> {
    const row = await this.db.selectFrom('sample_schemas').select('schema').where('project_id', '=', projectId).where('modality', '=', 'tabular').executeTakeFirst();
    if (!row) return undefined;
    const schema = JSON.parse(row.schema) as Partial<TabularLayout>;
    return typeof schema.target === 'string' && schema.target !== '' && Array.isArray(schema.columns)
      ? { target: schema.target, task: schema.task === 'regression' ? 'regression' : 'classification', columns: schema.columns }
      : undefined;
  }

  /** A chunk of a modality's samples in id order after `afterId`. */
  chunk(projectId: number, modality: SampleModality, afterId: number, limit: number): Promise<SampleChunkRow[]> {
    return this.db
      .selectFrom('samples')
      .select(['id', 'split', 'data', 'label', 'labels', 'value'])
      .where('project_id', '=', projectId)
      .where('modality', '=', modality)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Character lengths of the text samples' texts in id order after `afterId` (the text itself stays in the database). */
  textLengths(projectId: number, afterId: number, limit: number): Promise<{ id: number; length: number | null }[]> {
    return this.db
      .selectFrom('samples')
      .select(['id', sql<number | null>`length(${jsonText(this.db, 'data', ['text'])})`.as('length')])
      .where('project_id', '=', projectId)
      .where('modality', '=', 'text')
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }
}
