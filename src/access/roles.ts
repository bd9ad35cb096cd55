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
  'reviews.submit',
  'reviews.decide',
  'assignments.write',
  'locks.break',
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
const annotator: Permission[] = [...viewer, 'images.write', 'annotations.write', 'reviews.submit'];
const reviewer: Permission[] = [...annotator, 'reviews.decide'];
const admin: Permission[] = [
  ...reviewer,
  'project.update',
  'project.members',
  'assignments.write',
  'locks.break',
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

/** Strongest first: when a caller holds several roles (membership and organization), the first one wins. */
export function strongestRole(a: ProjectRole | null, b: ProjectRole | null): ProjectRole | null {
  if (a === null) return b;
  if (b === null) return a;
  return PROJECT_ROLES.indexOf(a) <= PROJECT_ROLES.indexOf(b) ? a : b;
}

export const ORG_ROLES = ['owner', 'admin', 'member'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

export const ORG_ROLE_CATALOG: readonly { name: OrgRole; description: string }[] = [
  { name: 'owner', description: 'Created the organization or was made owner; manages members (owners too) and its projects.' },
  { name: 'admin', description: "Manages the organization's members and acts as admin in every project of the organization." },
  { name: 'member', description: 'Belongs to the organization; sees its projects only where made a project member.' },
];

/** The project role an organization role grants in the organization's projects. */
export function projectRoleFromOrg(role: OrgRole | null): ProjectRole | null {
  return role === 'owner' || role === 'admin' ? 'admin' : null;
}

export function roleAllows(role: ProjectRole, permission: Permission): boolean {
  return byName.get(role)?.has(permission) ?? false;
}
