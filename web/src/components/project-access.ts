import { useEffect, useState } from 'react';
import { api } from '../api.js';
import type { ResponseOf } from '../types.js';

export type ProjectAccess = ResponseOf<'/api/projects/{id}/my-access', 'get'>;
type Permission = ProjectAccess['permissions'][number];

/** Why a role lacks a permission, in words shown next to a disabled control. */
const NEEDS: Partial<Record<Permission, string>> = {
  'project.members': 'Only project admins manage members and invitations',
  'classes.write': 'Only project admins change classes',
  'images.write': 'Viewers cannot upload images',
  'images.delete': 'Only project admins delete images',
  'annotations.write': 'Viewers cannot annotate',
  'reviews.submit': 'Viewers cannot submit work for review',
  'reviews.decide': 'Only reviewers and admins decide reviews',
  'assignments.write': 'Only project admins assign images',
  'versions.write': 'Only project admins create versions',
  'models.write': 'Only project admins manage models',
  'project.update': 'Only project admins change the project',
  export: 'Your role cannot export',
};

const cache = new Map<number, Promise<ProjectAccess>>();

/** The caller's role in a project, read once per page load (GET /api/projects/{id}/my-access). */
export function accessOf(projectId: number): Promise<ProjectAccess> {
  let promise = cache.get(projectId);
  if (!promise) {
    promise = api.get('/api/projects/{id}/my-access', { path: { id: projectId } });
    cache.set(projectId, promise);
    promise.catch(() => cache.delete(projectId));
  }
  return promise;
}

/**
 * The caller's role in a project (GET /api/projects/{id}/my-access). Pages hide or disable, with the reason, the
 * controls the role cannot use, instead of offering them and answering 403. `null` while loading: controls that
 * need a permission stay disabled until it is known.
 */
export function useProjectAccess(projectId: number) {
  const [access, setAccess] = useState<ProjectAccess | null>(null);
  useEffect(() => void accessOf(projectId).then(setAccess, () => undefined), [projectId]);
  const can = (permission: Permission) => access?.permissions.includes(permission) ?? false;
  /** The reason a control is disabled, or undefined when the caller may use it. */
  const why = (permission: Permission): string | undefined =>
    can(permission) ? undefined : access === null ? 'Checking your role…' : `${NEEDS[permission] ?? `Needs ${permission}`} (you are ${access.role})`;
  return { access, can, why };
}

/** Forget a project's cached role (after a role change). */
export function forgetProjectAccess(projectId: number): void {
  cache.delete(projectId);
}
