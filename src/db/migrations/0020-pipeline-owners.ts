import { sql, type Kysely } from 'kysely';

/**
 * A pipeline is owned by a project or by an organization (issue 24): global pipelines, listed and runnable by every
 * account and changed by their creator under every project that ran them, are gone. Each one moves to the
 * organization its creator owns or administers (an owner's first, then the lowest id); one whose creator manages no
 * organization stays without an owner and is then seen, run and changed by its creator (and instance admins) alone.
 * An organization's deletion leaves its pipelines to their creators the same way, with their run history.
 */
export function pipelineOwners() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('pipelines').addColumn('org_id', 'integer', (c) => c.references('orgs.id').onDelete('set null')).execute();
      await db.schema.createIndex('pipelines_org').on('pipelines').columns(['org_id', 'id']).execute();
      await sql`
        update pipelines set org_id = (
          select m.org_id from org_members m
          where m.user_id = pipelines.created_by and m.role in ('owner', 'admin')
          order by case m.role when 'owner' then 0 else 1 end, m.org_id
          limit 1
        )
        where project_id is null`.execute(db);
    },
  };
}
