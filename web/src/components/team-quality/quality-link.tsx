import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import { Link } from '../../router.js';
import type { ProjectAccess } from '../project-access.js';

/**
 * The project navigation's way to team quality: "Team quality" for project admins and owners, "Disagreements" for
 * reviewers, "My scores" for an annotator only when the project shows annotators their scores; nothing otherwise.
 */
export function QualityLink({ projectId, access }: { projectId: number; access: ProjectAccess | null }) {
  const lead = access?.permissions.includes('project.update') ?? false;
  const reviewer = access?.permissions.includes('reviews.decide') ?? false;
  const [ownVisible, setOwnVisible] = useState(false);
  useEffect(() => {
    if (!access || lead) return;
    api.get('/api/projects/{id}/quality-control/my-scores', { path: { id: projectId } }).then((m) => setOwnVisible(m.visible), () => undefined);
  }, [projectId, access, lead]);
  if (lead) {
    return (
      <Link href={`/projects/${projectId}/quality`} className="button">
        Team quality
      </Link>
    );
  }
  return (
    <>
      {reviewer && (
        <Link href={`/projects/${projectId}/quality/disagreements`} className="button">
          Disagreements
        </Link>
      )}
      {ownVisible && (
        <Link href={`/projects/${projectId}/quality`} className="button">
          My scores
        </Link>
      )}
    </>
  );
}
