import type { Kysely } from 'kysely';

/**
 * An invitation keeps its link's secret sealed with SECRETS_KEY beside the hash it is found by (issue 30, item 8), so
 * the project's admins can see and copy a pending link again. Null where the server has no SECRETS_KEY, and for
 * invitations made before this: only their hash exists, their link is shown once.
 */
export function invitationLinks() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('invitations').addColumn('token_sealed', 'varchar(255)').execute();
    },
  };
}
