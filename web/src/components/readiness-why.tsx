import { Link } from '../router.js';
import type { ResponseOf } from '../types.js';
import { useProjectAccess, type ProjectAccess } from './project-access.js';

type Readiness = ResponseOf<'/api/projects/{id}/readiness', 'post'>;
type Check = Readiness['checks'][number];
type FixAction = NonNullable<Check['fix']>['actions'][number];

/** What a fix needs of the caller's role: a fix the role cannot use is not offered (the words still say what to do). */
const NEEDS: Partial<Record<FixAction, ProjectAccess['permissions'][number]>> = {
  upload: 'images.write',
  label: 'annotations.write',
  remove_unannotated: 'images.delete',
  assign_splits: 'images.write',
  classes: 'classes.write',
  export: 'export',
  label_samples: 'annotations.write',
};

/** Where each fix leads: a page to open, or (remove_unannotated) the cleaning dialog with its action chosen. */
function fixLink(projectId: number, action: FixAction): { label: string; href: string } | null {
  switch (action) {
    case 'upload':
      return { label: 'Upload images', href: `/projects/${projectId}/upload` };
    case 'label':
      return { label: 'Open the editor', href: `/projects/${projectId}/annotate` };
    case 'label_unannotated':
      return { label: 'Show the unlabelled images', href: `/projects/${projectId}?annotated=no` };
    case 'assign_splits':
      return { label: 'Open Splits', href: `/projects/${projectId}?tab=splits` };
    case 'classes':
      return { label: 'Edit the classes', href: `/projects/${projectId}` };
    case 'export':
      return { label: 'Export', href: `/projects/${projectId}?tab=export` };
    case 'label_samples':
      return { label: 'Open the samples', href: `/projects/${projectId}/samples` };
    default:
      return null;
  }
}

/**
 * Why the project is not ready to train, in words, and the fix of each failed check as a link or button: the
 * blockers first, then the other failed checks, heaviest first (issue 30, item 5).
 */
export function ReadinessWhy({ projectId, readiness, onClean }: { projectId: number; readiness: Readiness; onClean: (actions: string[]) => void }) {
  const { can } = useProjectAccess(projectId);
  if (readiness.ready) return null;
  const blocking = new Set(readiness.blockers);
  const failed = readiness.checks
    .filter((c) => !c.passed && c.fix)
    .sort((a, b) => Number(blocking.has(b.message)) - Number(blocking.has(a.message)) || b.weight - a.weight);
  return (
    <div className="readiness-why" data-testid="readiness-why" role="note">
      <p>
        <b>{blocking.size > 0 ? 'Why training is blocked' : `Why readiness is below the gate of ${readiness.threshold}`}</b>
      </p>
      <ul>
        {failed.map((c) => (
          <li key={c.id} data-readiness-check={c.id} className={blocking.has(c.message) ? 'blocker' : ''}>
            <span>{c.fix!.text}</span>{' '}
            {c.fix!.actions.filter((action) => !NEEDS[action] || can(NEEDS[action])).map((action) => {
              if (action === 'remove_unannotated') {
                return (
                  <button key={action} className="small" onClick={() => onClean(['remove_unannotated_images'])}>
                    Remove unannotated images…
                  </button>
                );
              }
              const link = fixLink(projectId, action);
              return link && (
                <Link key={action} className="button small" href={link.href}>
                  {link.label}
                </Link>
              );
            })}
          </li>
        ))}
      </ul>
    </div>
  );
}
