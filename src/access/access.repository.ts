import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/database.js';
import { PreparedQuery } from '../db/prepared-query.js';
import type { OrgRole, ProjectRole } from './roles.js';

/** What decides a non-owner's standing in a project: their membership, their organization role, the project's mode. */
export interface ProjectGrant {
  member_role: Exclude<ProjectRole, 'owner'> | null;
  org_role: OrgRole | null;
  assigned_only: number;
}

/** The membership lookups of the access module; one prepared query serves every permission check. */
export class AccessRepository {
  private readonly grant: PreparedQuery<{ userId: number; projectId: number }, ProjectGrant>;

  constructor(private readonly db: Db) {
    this.grant = new PreparedQuery(db, ['userId', 'projectId'], (p) =>
      db
        .selectFrom('projects')
        .leftJoin('project_members', (join) =>
          join.onRef('project_members.project_id', '=', 'projects.id').on('project_members.user_id', '=', p.userId),
        )
        .leftJoin('org_members', (join) => join.onRef('org_members.org_id', '=', 'projects.org_id').on('org_members.user_id', '=', p.userId))
        .select(['project_members.role as member_role', 'org_members.role as org_role', 'projects.assigned_only'])
        .where('projects.id', '=', p.projectId)
        .where('projects.status', '=', 'ready'),
    );
  }

  async findGrant(userId: number, projectId: number): Promise<ProjectGrant | undefined> {
    return (await this.grant.run({ userId, projectId })).rows[0];
  }

  /** Whether the project keeps ground-truth images (issue 29). */
  async hasGroundTruth(projectId: number): Promise<boolean> {
    const row = await this.db.selectFrom('qc_ground_truth').select('image_id').where('project_id', '=', projectId).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** Which of the images are ground truth of the project. */
  async groundTruthAmong(projectId: number, imageIds: readonly number[]): Promise<Set<number>> {
    const out = new Set<number>();
    for (let i = 0; i < imageIds.length; i += 500) {
      const rows = await this.db.selectFrom('qc_ground_truth').select('image_id').where('project_id', '=', projectId).where('image_id', 'in', imageIds.slice(i, i + 500)).execute();
      for (const r of rows) out.add(r.image_id);
    }
    return out;
  }

  /** Whether the project keeps ground-truth samples (issue 29). */
  async hasSampleGroundTruth(projectId: number): Promise<boolean> {
    const row = await this.db.selectFrom('qc_sample_ground_truth').select('sample_id').where('project_id', '=', projectId).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** Which of the samples are ground truth of the project. */
  async sampleGroundTruthAmong(projectId: number, sampleIds: readonly number[]): Promise<Set<number>> {
    const out = new Set<number>();
    for (let i = 0; i < sampleIds.length; i += 500) {
      const rows = await this.db.selectFrom('qc_sample_ground_truth').select('sample_id').where('project_id', '=', projectId).where('sample_id', 'in', sampleIds.slice(i, i + 500)).execute();
      for (const r of rows) out.add(r.sample_id);
    }
    return out;
  }

  findOrg(orgId: number) {
    return this.db.selectFrom('orgs').selectAll().where('id', '=', orgId).executeTakeFirst();
  }

  async orgRole(userId: number, orgId: number): Promise<OrgRole | null> {
    const row = await this.db
      .selectFrom('org_members')
      .select('role')
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.role ?? null;
  }
}

/**
 * The projects a user may see, as a condition on `projects`: owned, a member of, or in an organization they
 * administer. Listings (projects, stats, models) use it so that they show exactly what the permission checks allow.
 */
export function projectVisibleTo(userId: number): Expression<SqlBool> {
  return sql<SqlBool>`projects.status = 'ready' and (projects.owner_id = ${userId}
    or exists (select 1 from project_members pm where pm.project_id = projects.id and pm.user_id = ${userId})
    or exists (select 1 from org_members om where om.org_id = projects.org_id and om.user_id = ${userId} and om.role in ('owner', 'admin')))`;
}
