/** Everything a role can be allowed to do in a project. Services ask for one of these; routes never look at roles. */
export const PERMISSIONS = [
  'project.read',
  'project.update',
  'project.delete',
  'project.members',
  'classes.write',
  'images.write',
  'images.delete',
  'annotations.write',
  'reviews.decide',
  'versions.write',
  'export',
  'models.write',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const PROJECT_ROLES = ['owner', 'admin', 'reviewer', 'annotator', 'viewer'] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

interface RoleDefinition {
  name: ProjectRole;
  description: string;
  permissions: readonly Permission[];
}

const viewer: Permission[] = ['project.read', 'export'];
const annotator: Permission[] = [...viewer, 'images.write', 'annotations.write'];
const reviewer: Permission[] = [...annotator, 'reviews.decide'];
const admin: Permission[] = [
  ...reviewer,
  'project.update',
  'project.members',
  'classes.write',
  'images.delete',
  'versions.write',
  'models.write',
];

export const ROLE_CATALOG: readonly RoleDefinition[] = [
  { name: 'owner', description: 'Created the project; can do everything, including deleting it.', permissions: [...admin, 'project.delete'] },
  { name: 'admin', description: 'Manages the project: settings, members, classes, versions and models.', permissions: admin },
  { name: 'reviewer', description: 'Annotates and approves, rejects or returns submitted work.', permissions: reviewer },
  { name: 'annotator', description: 'Uploads images and annotates them.', permissions: annotator },
  { name: 'viewer', description: 'Reads the project and exports it.', permissions: viewer },
];

const byName = new Map(ROLE_CATALOG.map((r) => [r.name, new Set<Permission>(r.permissions)]));

export function roleAllows(role: ProjectRole, permission: Permission): boolean {
  return byName.get(role)?.has(permission) ?? false;
}
