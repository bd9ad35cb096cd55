/**
 * BENCH ONLY. Preloaded into a benchmark's server process (`NODE_OPTIONS=--import …`) to switch parts of the teams
 * machinery off, so `bench/permissions.ts` can compare against a server without them. Nothing in `src/` reads
 * BENCH_BYPASS; a server started any other way is never affected.
 *   BENCH_BYPASS=permissions  every project permission check passes as owner, no assignment scope
 *   BENCH_BYPASS=revisions    annotation writes record no revision
 * (comma-separated for both)
 */
import { ProjectAccess } from '../../src/access/project-access.js';
import { NotFoundError } from '../../src/http/errors.js';
import { RevisionsRepository } from '../../src/modules/revisions/revisions.repository.js';

const bypass = new Set((process.env.BENCH_BYPASS ?? '').split(',').map((s) => s.trim()).filter(Boolean));

if (bypass.has('permissions')) {
  ProjectAccess.prototype.check = async function check(_caller, project, _permission, notFound) {
    if (!project) throw new NotFoundError(notFound);
    return 'owner';
  };
  ProjectAccess.prototype.assignedOnlyUser = async () => null;
}
if (bypass.has('revisions')) {
  RevisionsRepository.prototype.insert = async () => undefined;
}
if (bypass.size > 0) console.error(`[bench] server without: ${[...bypass].join(', ')}`);
