import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { roleAllows, type Permission, type ProjectRole } from '../../src/access/roles.js';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

/**
 * Every route of the app × every kind of caller → the status class they must get. The route list comes from the
 * app itself (Versa.routes, collected by an onRoute hook), so a route added without a row here fails the test.
 *
 * Rules: `public` (no credentials needed), `user` (any signed-in caller), a project permission (members whose role
 * has it pass; other members 403; everyone else 404; anonymous 401), `org-read`/`org-manage` (the fixture org's
 * owner passes, its plain member (the viewer) reads but gets 403 on managing; everyone else 404). `public` routes
 * must not answer 401 without credentials. `auth-only` rows are checked for 401 alone: their success needs data this test
 * does not build (model files, versions, exports, jobs, multipart uploads) or would end the caller's session;
 * their role checks are covered by their own modules' tests. "Pass" means the request got past authorization:
 * 2xx, or a state answer such as 409 from an earlier persona's change; never 401, 403 or 404.
 */
type Rule = 'public' | 'user' | 'auth-only' | 'org-read' | 'org-manage' | Permission;

interface Fixture {
  projectId: number;
  orgId: number;
  classId: number;
  imageId: number;
  freshImageId: number;
  annotationId: number;
  revisionId: number;
  reviewId: number;
  assignmentId: number;
  memberId: number;
  spareUserId: number;
  storageId: number;
}

/**
 * What an annotator of an assigned-only project gets from a route (issue 24): every route that may return or touch
 * project data states it, so a new one cannot be added without deciding. `scoped`: only their assigned items (an
 * unassigned image, and what is on it, is 404; listings hold only theirs). `whole`: the answer covers the whole
 * project (exports, canonical, version outputs and diffs, quality, profile, readiness, pipeline runs): 403.
 * `no-items`: the answer holds no image, annotation or sample (settings, classes, members, counts, models, jobs).
 */
type AssignedOnly = 'scoped' | 'whole' | 'no-items';

interface Row {
  rule: Rule;
  assigned?: AssignedOnly;
  path?: (f: Fixture) => string;
  body?: (f: Fixture) => unknown;
}

let seq = 0;
// Nothing listens on port 9 (discard): a storage's connection test fails fast without a server.
const STORAGE_ENDPOINT = 'http://127.0.0.1:9';
const storageBody = (name: string) => ({ name, endpoint: STORAGE_ENDPOINT, bucket: 'photos', prefix: 'matrix', access_key_id: 'AKIAMATRIXKEY', secret_access_key: 'matrix-secret-key-0123456789' });
const bbox = (f: Fixture) => ({ class_id: f.classId, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } });

const MATRIX: Record<string, Row> = {
  'GET /api/health': { rule: 'public' },
  'GET /api/ready': { rule: 'public' },
  'POST /api/auth/login': { rule: 'public' },
  'POST /api/auth/register': { rule: 'public' },
  'POST /api/auth/logout': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/auth/me': { rule: 'user', assigned: 'no-items' },
  'GET /api/auth/tokens': { rule: 'user', assigned: 'no-items' },
  'POST /api/auth/tokens': { rule: 'user', assigned: 'no-items', body: () => ({ name: 'matrix' }) },
  'DELETE /api/auth/tokens': { rule: 'auth-only', assigned: 'no-items' },
  'DELETE /api/auth/tokens/:id': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/identity/roles': { rule: 'user', assigned: 'no-items' },
  'GET /api/stats': { rule: 'user', assigned: 'no-items' },
  'GET /api/system/device': { rule: 'user', assigned: 'no-items' },
  'GET /api/pipeline/defaults': { rule: 'user', assigned: 'no-items' },
  'GET /api/models': { rule: 'user', assigned: 'no-items' },
  'GET /api/models/runs': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/assignments/mine': { rule: 'user', assigned: 'scoped' },
  'GET /api/orgs': { rule: 'user', assigned: 'no-items' },
  'POST /api/orgs': { rule: 'user', assigned: 'no-items', body: () => ({ name: 'matrix org' }) },
  'GET /api/projects': { rule: 'user', assigned: 'no-items' },
  'POST /api/projects': { rule: 'user', assigned: 'no-items', body: () => ({ name: 'matrix project' }) },
  'POST /api/projects/bulk-delete': { rule: 'user', assigned: 'no-items', body: () => ({ ids: [2_000_000_000] }) },
  'POST /api/images/bulk-delete': { rule: 'user', assigned: 'scoped', body: () => ({ ids: [2_000_000_000] }) },
  'POST /api/projects/import': { rule: 'auth-only', assigned: 'no-items' },
  'POST /api/projects/import/folder': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/plugins': { rule: 'user', assigned: 'no-items' },
  'GET /api/plugins/:type/:name': { rule: 'user', assigned: 'no-items', path: () => '/api/plugins/exporter/coco' },
  'GET /api/pipelines/step-types': { rule: 'user', assigned: 'no-items' },
  'GET /api/pipelines/example': { rule: 'user', assigned: 'no-items' },
  'GET /api/pipelines': { rule: 'user', assigned: 'no-items' },
  'POST /api/pipelines': { rule: 'user', assigned: 'no-items', body: () => ({ name: `matrix pipeline ${++seq}` }) },
  'POST /api/pipelines/validate': { rule: 'user', assigned: 'no-items', body: () => ({ name: 'matrix', steps: [{ id: 's', type: 'select_images' }] }) },
  // Pipelines by id and YAML bodies: their 404/403 cases per role are in test/http/pipelines.test.ts.
  'POST /api/pipelines/validate-yaml': { rule: 'auth-only', assigned: 'no-items' },
  'POST /api/pipelines/from-yaml': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/pipelines/:id': { rule: 'auth-only', assigned: 'no-items' },
  'PUT /api/pipelines/:id': { rule: 'auth-only', assigned: 'no-items' },
  'DELETE /api/pipelines/:id': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/pipelines/:id/yaml': { rule: 'auth-only', assigned: 'no-items' },
  'POST /api/pipelines/:id/run': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/pipelines/:id/runs': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/pipeline-runs/:id': { rule: 'auth-only', assigned: 'whole' },
  'POST /api/pipeline-runs/:id/cancel': { rule: 'auth-only', assigned: 'whole' },

  'GET /api/orgs/:id': { rule: 'org-read', path: (f) => `/api/orgs/${f.orgId}` },
  'GET /api/orgs/:id/members': { rule: 'org-read', path: (f) => `/api/orgs/${f.orgId}/members` },
  'POST /api/orgs/:id/members': { rule: 'org-manage', path: (f) => `/api/orgs/${f.orgId}/members`, body: (f) => ({ user_id: f.spareUserId, role: 'member' }) },
  'PATCH /api/orgs/:id/members/:user_id': { rule: 'org-manage', path: (f) => `/api/orgs/${f.orgId}/members/${f.memberId}`, body: () => ({ role: 'admin' }) },
  'DELETE /api/orgs/:id/members/:user_id': { rule: 'org-manage', path: (f) => `/api/orgs/${f.orgId}/members/${f.memberId}` },

  'GET /api/projects/:id': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}` },
  'PATCH /api/projects/:id': { rule: 'project.update', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}`, body: () => ({ description: 'changed' }) },
  'DELETE /api/projects/:id': { rule: 'project.delete', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}` },
  'GET /api/projects/:id/members': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/members` },
  'POST /api/projects/:id/members': { rule: 'project.members', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/members`, body: (f) => ({ user_id: f.spareUserId, role: 'viewer' }) },
  'PATCH /api/projects/:id/members/:user_id': { rule: 'project.members', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/members/${f.memberId}`, body: () => ({ role: 'annotator' }) },
  'DELETE /api/projects/:id/members/:user_id': { rule: 'project.members', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/members/${f.memberId}` },
  'GET /api/projects/:id/classes': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/classes` },
  'POST /api/projects/:id/classes': { rule: 'classes.write', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/classes`, body: () => ({ name: `c${++seq}` }) },
  'PATCH /api/classes/:class_id': { rule: 'classes.write', assigned: 'no-items', path: (f) => `/api/classes/${f.classId}`, body: () => ({ name: `r${++seq}` }) },
  'DELETE /api/classes/:class_id': { rule: 'classes.write', assigned: 'no-items', path: (f) => `/api/classes/${f.classId}` },
  'GET /api/projects/:id/images': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/images` },
  'GET /api/projects/:id/next-to-label': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/next-to-label?strategy=random` },
  'POST /api/projects/:id/images': { rule: 'auth-only', assigned: 'scoped' },
  // Multipart archives and folders under IMPORT_ROOT: their 404/403 cases per role are in imports-into-project.test.ts.
  'POST /api/projects/:id/import': { rule: 'auth-only', assigned: 'whole' },
  'POST /api/projects/:id/import/folder': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/projects/:id/images/file/:filename': { rule: 'auth-only', assigned: 'scoped' },
  // Videos and tracks (issue 26): a video's frames and tracks span images an assigned-only annotator may not see. Their
  // 404/403 cases per role are in test/http/videos.test.ts (a video needs FFmpeg to exist).
  'GET /api/projects/:id/videos': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/videos` },
  'POST /api/projects/:id/videos': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/videos/:id': { rule: 'auth-only', assigned: 'no-items' },
  // Project storages (issue 27): the fixture's is a source whose endpoint refuses connections (STORAGE_ALLOWLIST below),
  // so a connection test answers ok: false, a sync's job fails on its own, and writing to it is 409 (not a target).
  'GET /api/projects/:id/storages': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/storages` },
  'POST /api/projects/:id/storages': { rule: 'project.update', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/storages`, body: () => storageBody(`s${++seq}`) },
  'GET /api/projects/:id/storages/:storage_id': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/storages/${f.storageId}` },
  'PATCH /api/projects/:id/storages/:storage_id': { rule: 'project.update', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/storages/${f.storageId}`, body: () => ({ name: `r${++seq}` }) },
  'DELETE /api/projects/:id/storages/:storage_id': { rule: 'project.update', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/storages/${f.storageId}` },
  'POST /api/projects/:id/storages/:storage_id/test': { rule: 'project.update', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/storages/${f.storageId}/test` },
  'POST /api/projects/:id/storages/:storage_id/sync': { rule: 'images.write', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/storages/${f.storageId}/sync` },
  'GET /api/projects/:id/storages/:storage_id/objects': { rule: 'project.read', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/storages/${f.storageId}/objects` },
  'POST /api/projects/:id/storages/:storage_id/exports': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/storages/${f.storageId}/exports`, body: () => ({ format: 'coco' }) },
  'POST /api/projects/:id/storages/:storage_id/versions/:version_id': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/storages/${f.storageId}/versions/1` },
  'DELETE /api/videos/:id': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/videos/:id/tracks': { rule: 'auth-only', assigned: 'whole' },
  'POST /api/videos/:id/tracks': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/tracks/:id': { rule: 'auth-only', assigned: 'whole' },
  'PATCH /api/tracks/:id': { rule: 'auth-only', assigned: 'whole' },
  'DELETE /api/tracks/:id': { rule: 'auth-only', assigned: 'whole' },
  // Suggested tracks (a detector run over a video's frames): per role in test/http/track-suggestions.test.ts.
  'POST /api/videos/:id/track-suggestions': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/videos/:id/track-suggestions': { rule: 'auth-only', assigned: 'whole' },
  'POST /api/track-suggestions/:id/accept': { rule: 'auth-only', assigned: 'whole' },
  'DELETE /api/track-suggestions/:id': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/images/:image_id': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}` },
  'PATCH /api/images/:image_id': { rule: 'images.write', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}`, body: () => ({ split: 'train' }) },
  'DELETE /api/images/:image_id': { rule: 'images.delete', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}` },
  'GET /api/images/:image_id/thumbnail': { rule: 'auth-only', assigned: 'scoped' },
  'GET /api/images/:image_id/annotations': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}/annotations` },
  'POST /api/images/:image_id/annotations': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}/annotations`, body: bbox },
  'GET /api/annotations/:id': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/annotations/${f.annotationId}` },
  'PUT /api/annotations/:id': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/annotations/${f.annotationId}`, body: bbox },
  'DELETE /api/annotations/:id': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/annotations/${f.annotationId}` },
  'GET /api/annotations/:id/revisions': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/annotations/${f.annotationId}/revisions` },
  'POST /api/annotations/:id/revert': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/annotations/${f.annotationId}/revert`, body: (f) => ({ revision_id: f.revisionId }) },
  'POST /api/annotations/:id/accept': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/annotations/${f.annotationId}/accept` },
  'POST /api/annotations/:id/reject': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/annotations/${f.annotationId}/reject` },
  'POST /api/images/:image_id/predictions/accept-all': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}/predictions/accept-all`, body: () => ({}) },
  'POST /api/images/:image_id/predictions/reject-all': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}/predictions/reject-all`, body: () => ({}) },
  // Rendering needs stored image bytes (the fixture's images are rows only): roles are covered in version-preview.test.ts.
  'POST /api/projects/:project_id/versions/preview': { rule: 'versions.write', assigned: 'whole' },
  'GET /api/projects/:id/my-access': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/my-access` },
  'POST /api/projects/:id/invitations': { rule: 'project.members', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/invitations`, body: () => ({ email: `invitee${++seq}@example.com`, role: 'viewer' }) },
  'GET /api/projects/:id/invitations': { rule: 'project.members', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/invitations` },
  // Roles on revoking are covered in invitations.test.ts.
  'DELETE /api/invitations/:id': { rule: 'project.members', assigned: 'no-items' },
  'GET /api/invitations/:token': { rule: 'public' },
  'POST /api/invitations/:token/accept': { rule: 'public' },
  'GET /api/images/:image_id/revisions': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}/revisions` },
  'GET /api/images/:image_id/lock': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}/lock` },
  'POST /api/images/:image_id/lock': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}/lock` },
  'DELETE /api/images/:image_id/lock': { rule: 'locks.break', assigned: 'scoped', path: (f) => `/api/images/${f.imageId}/lock?force=true` },
  'GET /api/projects/:id/assignments': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/assignments` },
  'POST /api/projects/:id/assignments': { rule: 'assignments.write', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/assignments`, body: (f) => ({ user_id: f.memberId, image_ids: [f.freshImageId] }) },
  'GET /api/projects/:id/assignments/progress': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/assignments/progress` },
  'DELETE /api/assignments/:id': { rule: 'assignments.write', assigned: 'scoped', path: (f) => `/api/assignments/${f.assignmentId}` },
  'GET /api/projects/:id/reviews': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/reviews` },
  'POST /api/projects/:id/reviews': { rule: 'reviews.submit', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/reviews`, body: (f) => ({ image_id: f.freshImageId }) },
  'POST /api/projects/:id/reviews/batch': { rule: 'reviews.submit', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/reviews/batch`, body: (f) => ({ image_ids: [f.freshImageId] }) },
  'GET /api/reviews/:id': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/reviews/${f.reviewId}` },
  'POST /api/reviews/:id/decide': { rule: 'reviews.decide', assigned: 'scoped', path: (f) => `/api/reviews/${f.reviewId}/decide`, body: () => ({ decision: 'approve' }) },
  'GET /api/projects/:id/splits': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/splits` },
  'POST /api/projects/:id/splits': { rule: 'versions.write', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/splits?train=70&valid=20&test=10&seed=1` },
  'POST /api/projects/:id/export': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/quality/checks': { rule: 'user', assigned: 'no-items' },
  'GET /api/projects/:id/profile': { rule: 'project.read', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/profile` },
  'GET /api/projects/:id/quality': { rule: 'project.read', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality` },
  'POST /api/projects/:id/quality': { rule: 'project.read', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality`, body: () => ({ checks: ['blurry'] }) },
  'GET /api/cleaning/actions': { rule: 'user', assigned: 'no-items' },
  'POST /api/projects/:id/cleaning/preview': { rule: 'images.delete', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/cleaning/preview`, body: () => ({ actions: [{ id: 'drop_tiny_annotations' }] }) },
  'POST /api/projects/:id/cleaning': { rule: 'images.delete', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/cleaning`, body: () => ({ actions: [{ id: 'drop_tiny_annotations', params: { min_area: 0, min_side: 0 } }] }) },
  'GET /api/projects/:id/cleaning/runs': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/cleaning/runs` },
  'POST /api/cleaning-runs/:id/revert': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/projects/:id/canonical': { rule: 'export', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/canonical?format=json` },
  'POST /api/projects/:id/readiness': { rule: 'project.read', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/readiness`, body: () => ({}) },
  'GET /api/exports/:filename': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/jobs/:id': { rule: 'auth-only', assigned: 'no-items' },
  'POST /api/jobs/:id/cancel': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/training/adapters': { rule: 'user', assigned: 'no-items' },
  'POST /api/projects/:id/train': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/projects/:id/train/status': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/train/status` },
  'GET /api/train/jobs/:job_id': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/projects/:id/experiments': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/experiments` },
  'GET /api/experiments/:id': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/experiments/:id/errors': { rule: 'auth-only', assigned: 'scoped' },
  'PATCH /api/experiments/:id': { rule: 'auth-only', assigned: 'no-items' },
  'POST /api/experiments/compare': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/projects/:id/models': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/models` },
  'POST /api/projects/:id/models': { rule: 'auth-only', assigned: 'no-items' },
  'POST /api/projects/:id/models/upload': { rule: 'auth-only', assigned: 'no-items' },
  'DELETE /api/models/:model_id': { rule: 'auth-only', assigned: 'no-items' },
  'PATCH /api/models/:model_id/lifecycle': { rule: 'auth-only', assigned: 'no-items' },
  'POST /api/projects/:id/auto-annotate/sam': { rule: 'auth-only', assigned: 'scoped' },
  'POST /api/projects/:id/auto-annotate/sam/precompute': { rule: 'auth-only', assigned: 'scoped' },
  'POST /api/projects/:id/auto-annotate/yolo': { rule: 'auth-only', assigned: 'scoped' },
  // The fixture has no production model: callers with annotations.write get past authorization to the 409.
  'POST /api/projects/:id/suggestions/prefetch': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/suggestions/prefetch`, body: (f) => ({ image_ids: [f.freshImageId] }) },
  'GET /api/projects/:project_id/versions': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/versions` },
  'POST /api/projects/:project_id/versions': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/projects/:project_id/versions/:version_id': { rule: 'auth-only', assigned: 'no-items' },
  'DELETE /api/projects/:project_id/versions/:version_id': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/projects/:project_id/versions/:version_id/images': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/projects/:project_id/versions/:version_id/images/:image_id/file': { rule: 'auth-only', assigned: 'whole' },
  'POST /api/projects/:project_id/versions/:version_id/regenerate': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/projects/:project_id/versions/:a/diff/:b': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/versions/:id': { rule: 'auth-only', assigned: 'no-items' },
  'GET /api/projects/:id/samples': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/samples` },
  'POST /api/projects/:id/samples': { rule: 'images.write', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/samples`, body: () => ({ modality: 'text', data: { text: 'matrix' } }) },
  'GET /api/samples/:sample_id': { rule: 'auth-only', assigned: 'scoped' },
  'PATCH /api/samples/:sample_id': { rule: 'auth-only', assigned: 'scoped' },
  'GET /api/samples/:sample_id/file': { rule: 'auth-only', assigned: 'scoped' },
  'GET /api/samples/:sample_id/lock': { rule: 'auth-only', assigned: 'scoped' },
  'POST /api/samples/:sample_id/lock': { rule: 'auth-only', assigned: 'scoped' },
  'DELETE /api/samples/:sample_id/lock': { rule: 'auth-only', assigned: 'scoped' },
  'GET /api/samples/:sample_id/revisions': { rule: 'auth-only', assigned: 'scoped' },
  // Sample submission and review need a sample; their per-role cases are in test/http/sample-teams.test.ts.
  'POST /api/samples/:sample_id/submit': { rule: 'auth-only', assigned: 'scoped' },
  'POST /api/samples/:sample_id/review': { rule: 'auth-only', assigned: 'scoped' },
  // A video sample sent to an image project as frames (issue 26) needs FFmpeg and a real video: per role in
  // test/http/sample-frames.test.ts. The sample is read in its scope (an unassigned one is 404); the target takes new
  // images on the whole project, so an annotator kept to assignments there gets 403.
  'POST /api/samples/:sample_id/frames': { rule: 'auth-only', assigned: 'whole' },
  'POST /api/projects/:id/samples/assign': { rule: 'assignments.write', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/samples/assign`, body: (f) => ({ user_id: f.memberId, count: 1 }) },
  'POST /api/projects/:id/import/text': { rule: 'auth-only', assigned: 'scoped' },
  'POST /api/projects/:id/import/tabular': { rule: 'auth-only', assigned: 'scoped' },
  'POST /api/projects/:id/import/jsonl': { rule: 'auth-only', assigned: 'scoped' },
  'GET /api/projects/:id/samples/target': { rule: 'project.read', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/samples/target` },
  'POST /api/projects/:id/samples/splits': { rule: 'versions.write', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/samples/splits`, body: () => ({ train: 80, valid: 10, test: 10 }) },
  'POST /api/projects/:id/adapters/prepare': { rule: 'auth-only', assigned: 'whole' },
  // The fixture has no tabular samples: callers with models.write get past authorization to the gate's 409.
  'POST /api/projects/:id/adapters/train': { rule: 'models.write', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/adapters/train`, body: () => ({ adapter: 'tabular' }) },
  // Labelling quality control (issue 29). Settings, ground truth, agreement and analytics: admins and owners; the
  // disagreement queue and consensus decisions: reviewers up; tasks: anyone who annotates, their own only (a task
  // makes its image visible to an assigned-only annotator, ground truth or not). Marking ground truth needs an approved
  // image and a task route needs a dealt task: their per-role cases are in test/http/quality-control.test.ts.
  'GET /api/projects/:id/quality-control/settings': { rule: 'project.update', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/quality-control/settings` },
  'PUT /api/projects/:id/quality-control/settings': { rule: 'project.update', assigned: 'no-items', path: (f) => `/api/projects/${f.projectId}/quality-control/settings`, body: () => ({ overlap: 2 }) },
  'GET /api/projects/:id/quality-control/ground-truth': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/ground-truth` },
  'POST /api/projects/:id/quality-control/ground-truth': { rule: 'auth-only', assigned: 'whole' },
  'DELETE /api/projects/:id/quality-control/ground-truth/:image_id': { rule: 'auth-only', assigned: 'whole' },
  // Quality control is off in the fixture: callers who may annotate get past authorization to the 409.
  'POST /api/projects/:id/quality-control/tasks/next': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/quality-control/tasks/next` },
  'GET /api/projects/:id/quality-control/tasks': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/quality-control/tasks` },
  'GET /api/projects/:id/quality-control/tasks/:image_id': { rule: 'auth-only', assigned: 'scoped' },
  'GET /api/projects/:id/quality-control/tasks/:image_id/tracks': { rule: 'auth-only', assigned: 'scoped' },
  'PUT /api/projects/:id/quality-control/tasks/:image_id': { rule: 'auth-only', assigned: 'scoped' },
  'POST /api/projects/:id/quality-control/tasks/:image_id/submit': { rule: 'auth-only', assigned: 'scoped' },
  'GET /api/projects/:id/quality-control/agreement': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/agreement` },
  'GET /api/projects/:id/quality-control/disagreements': { rule: 'reviews.decide', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/disagreements` },
  'POST /api/projects/:id/quality-control/consensus': { rule: 'reviews.decide', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/consensus`, body: (f) => ({ image_id: f.freshImageId, method: 'edit', shapes: [] }) },
  'GET /api/projects/:id/quality-control/decisions': { rule: 'reviews.decide', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/decisions` },
  // Task reviews (issue 29): deciding needs a submitted task; its per-role cases are in test/http/quality-control-task-reviews.test.ts.
  'GET /api/projects/:id/quality-control/task-reviews/pending': { rule: 'reviews.decide', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/task-reviews/pending` },
  'POST /api/projects/:id/quality-control/task-reviews': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/projects/:id/quality-control/task-reviews': { rule: 'reviews.decide', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/task-reviews` },
  'GET /api/projects/:id/quality-control/annotators': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/annotators` },
  'GET /api/projects/:id/quality-control/annotators/export': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/annotators/export` },
  'GET /api/projects/:id/quality-control/my-scores': { rule: 'project.read', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/quality-control/my-scores` },
  // Sample task reviews (issue 29): per-role cases in test/http/quality-control-sample-task-reviews.test.ts.
  'GET /api/projects/:id/quality-control/samples/task-reviews/pending': { rule: 'reviews.decide', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/samples/task-reviews/pending` },
  'POST /api/projects/:id/quality-control/samples/task-reviews': { rule: 'auth-only', assigned: 'whole' },
  'GET /api/projects/:id/quality-control/samples/task-reviews': { rule: 'reviews.decide', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/samples/task-reviews` },
  // Samples (issue 29): per-role cases of the task routes are in test/http/quality-control-samples.test.ts.
  'GET /api/projects/:id/quality-control/samples/ground-truth': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/samples/ground-truth` },
  'POST /api/projects/:id/quality-control/samples/ground-truth': { rule: 'auth-only', assigned: 'whole' },
  'POST /api/projects/:id/quality-control/samples/tasks/next': { rule: 'annotations.write', assigned: 'scoped', path: (f) => `/api/projects/${f.projectId}/quality-control/samples/tasks/next` },
  'GET /api/projects/:id/quality-control/samples/tasks/:sample_id': { rule: 'auth-only', assigned: 'scoped' },
  'PUT /api/projects/:id/quality-control/samples/tasks/:sample_id': { rule: 'auth-only', assigned: 'scoped' },
  'POST /api/projects/:id/quality-control/samples/tasks/:sample_id/submit': { rule: 'auth-only', assigned: 'scoped' },
  'GET /api/projects/:id/quality-control/samples/report': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/samples/report` },
  'GET /api/projects/:id/quality-control/samples/report/export': { rule: 'project.update', assigned: 'whole', path: (f) => `/api/projects/${f.projectId}/quality-control/samples/report/export` },
};

const MEMBER_ROLES = ['admin', 'reviewer', 'annotator', 'viewer'] as const;
type Persona = 'owner' | (typeof MEMBER_ROLES)[number] | 'other-org' | 'stranger' | 'anonymous';
/** Least privileged first, so that a destructive call by an allowed persona comes after every refusal. */
const PERSONAS: Persona[] = ['anonymous', 'stranger', 'other-org', 'viewer', 'annotator', 'reviewer', 'admin', 'owner'];

function expected(rule: Rule, persona: Persona): 'pass' | 401 | 403 | 404 {
  if (rule === 'public') return 'pass';
  if (persona === 'anonymous') return 401;
  if (rule === 'user') return 'pass';
  // In the fixture the owner owns the organization and the viewer is a plain member of it.
  if (rule === 'org-read') return persona === 'owner' || persona === 'viewer' ? 'pass' : 404;
  if (rule === 'org-manage') return persona === 'owner' ? 'pass' : persona === 'viewer' ? 403 : 404;
  if (persona === 'other-org' || persona === 'stranger') return 404;
  return roleAllows(persona as ProjectRole, rule as Permission) ? 'pass' : 403;
}

describe('authorization matrix', () => {
  let t: TestApp;
  const clients = {} as Record<Persona, Client>;
  const ids = {} as Record<Persona, number>;
  let spare: number;
  /** Every fixture's plain annotator (added to each new project and org), registered once: a password hash is costly. */
  let member: number;

  before(async () => {
    t = await startTestApp({ SECRETS_KEY: 'a'.repeat(64), STORAGE_ALLOWLIST: `${STORAGE_ENDPOINT}/` });
    await t.user(); // the instance admin sees everything; not a persona
    for (const persona of ['owner', ...MEMBER_ROLES, 'other-org', 'stranger'] as const) {
      const user = await t.user();
      clients[persona] = user;
      ids[persona] = user.id;
    }
    clients.anonymous = t.client();
    spare = (await t.user()).id;
    member = (await t.user()).id;
    const otherOrg = (await clients['other-org'].post('/api/orgs', { name: 'elsewhere' })).body.id as number;
    assert.ok(otherOrg > 0);
  });
  after(() => t.close());

  /**
   * Reads change nothing, so every GET row shares one fixture; a row that writes gets its own. Rows without a path
   * share it too: they never touch it (their URL's ids are placeholders).
   */
  let shared: Promise<Fixture> | undefined;
  const fixtureFor = (row: Row, method: string): Promise<Fixture> => (row.path && method !== 'GET' ? fixture() : (shared ??= fixture()));

  /** A project in the owner's organization with one member per role, a class, images, an annotation, a review. */
  async function fixture(): Promise<Fixture> {
    const owner = clients.owner;
    const orgId = (await owner.post('/api/orgs', { name: `org ${++seq}` })).body.id as number;
    await owner.post(`/api/orgs/${orgId}/members`, { user_id: ids.viewer, role: 'member' });
    const projectId = (await owner.post('/api/projects', { name: `matrix ${seq}`, org_id: orgId })).body.id as number;
    for (const role of MEMBER_ROLES) await owner.post(`/api/projects/${projectId}/members`, { user_id: ids[role], role });
    const memberId = member;
    await owner.post(`/api/projects/${projectId}/members`, { user_id: memberId, role: 'annotator' });
    await owner.post(`/api/orgs/${orgId}/members`, { user_id: memberId, role: 'member' });
    const classId = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'thing' })).body.id as number;
    const imageId = await insertImageRow(t, projectId);
    const freshImageId = await insertImageRow(t, projectId);
    const annotationId = (await owner.post(`/api/images/${imageId}/annotations`, bbox({ classId } as Fixture))).body.id as number;
    const revisionId = (await owner.get(`/api/annotations/${annotationId}/revisions`)).body[0].id as number;
    const reviewId = (await owner.post(`/api/projects/${projectId}/reviews`, { image_id: imageId })).body.id as number;
    const assignmentId = (await owner.post(`/api/projects/${projectId}/assignments`, { user_id: memberId, image_ids: [imageId] })).body[0].id as number;
    const storageId = (await owner.post(`/api/projects/${projectId}/storages`, storageBody('matrix source'))).body.id as number;
    return { projectId, orgId, classId, imageId, freshImageId, annotationId, revisionId, reviewId, assignmentId, memberId, spareUserId: spare, storageId };
  }

  it('has a row for every route of the app', () => {
    const routes = t.versa.routes.filter((r) => r.url.startsWith('/api/')).map((r) => `${r.method} ${r.url}`);
    const missing = routes.filter((key) => !(key in MATRIX));
    assert.deepEqual(missing, [], `routes without a row in the authorization matrix: ${missing.join(', ')}`);
    const stale = Object.keys(MATRIX).filter((key) => !routes.includes(key));
    assert.deepEqual(stale, [], 'rows for routes that no longer exist');
  });

  it('says for every route but the public and organization ones what an assigned-only annotator gets', () => {
    const undecided = Object.entries(MATRIX)
      .filter(([, row]) => !['public', 'org-read', 'org-manage'].includes(row.rule) && row.assigned === undefined)
      .map(([key]) => key);
    assert.deepEqual(undecided, [], `rows without \`assigned\` (scoped, whole or no-items): ${undecided.join(', ')}`);
  });

  it('answers every route × caller as the matrix says', async () => {
    const failures: string[] = [];
    let cells = 0;
    for (const [key, row] of Object.entries(MATRIX)) {
      const [method, url] = key.split(' ') as [string, string];
      const checked = row.path || row.rule === 'user' || row.rule === 'public' ? PERSONAS : (['anonymous'] as Persona[]);
      // Destructive routes get a fresh fixture for each persona that may succeed.
      let f = await fixtureFor(row, method);
      for (const persona of checked) {
        const want = expected(row.rule === 'auth-only' ? 'user' : row.rule, persona);
        if (row.rule === 'public' && persona !== 'anonymous') continue;
        if (method === 'DELETE' && want === 'pass') f = await fixture();
        const path = row.path ? row.path(f) : url.replace(/:(\w+)/g, '1');
        const body = row.body?.(f);
        const res = await clients[persona].request({ method: method as 'GET', url: path, ...(body === undefined ? {} : { payload: body as object }) });
        cells++;
        const ok =
          row.rule === 'public'
            ? res.status !== 401 && res.status < 500
            : want === 'pass'
              ? ![401, 403, 404, 422].includes(res.status) && res.status < 500
              : res.status === want;
        if (!ok) failures.push(`${key} as ${persona}: expected ${want}, got ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(cells > 400, `only ${cells} cells checked`);
    console.log(`authorization matrix: ${Object.keys(MATRIX).length} routes × ${PERSONAS.length} callers, ${cells} cells checked`);
  });

  /**
   * The same rows for an annotator of an assigned-only project whose assignment is `freshImageId` only: they are an
   * annotator everywhere, except that the unassigned image (`imageId`) and everything on it (its annotation,
   * revisions, review, lock) does not exist for them (404). Rows marked `whole` (exports, canonical, reports), which
   * hold the whole project, are 403 for them; those without a path here are checked in test/reliability/.
   */
  it('answers every route as an assigned-only annotator: unassigned images and what is on them are 404', async () => {
    const assigned = await t.user();
    const assignedOnly = async (): Promise<Fixture> => {
      const f = await fixture();
      await clients.owner.patch(`/api/projects/${f.projectId}`, { assigned_only: true });
      await clients.owner.post(`/api/projects/${f.projectId}/members`, { user_id: assigned.id, role: 'annotator' });
      await clients.owner.post(`/api/projects/${f.projectId}/assignments`, { user_id: assigned.id, image_ids: [f.freshImageId] });
      return f;
    };
    // As above: the GET rows share one fixture.
    let sharedAssigned: Promise<Fixture> | undefined;
    const failures: string[] = [];
    let cells = 0;
    for (const [key, row] of Object.entries(MATRIX)) {
      if (!row.path || row.rule === 'public' || row.rule === 'user' || row.rule === 'org-read' || row.rule === 'org-manage') continue;
      const [method] = key.split(' ') as [string, string];
      const f = method === 'GET' ? await (sharedAssigned ??= assignedOnly()) : await assignedOnly();
      const path = row.path(f);
      const onUnassigned = [`/images/${f.imageId}`, `/annotations/${f.annotationId}`, `/reviews/${f.reviewId}`].some((part) => path.includes(part) && !path.includes(`${part}0`));
      const asAnnotator = expected(row.rule, 'annotator');
      const want = asAnnotator !== 'pass' ? asAnnotator : row.assigned === 'whole' ? 403 : onUnassigned ? 404 : 'pass';
      const body = row.body?.(f);
      const res = await assigned.request({ method: method as 'GET', url: path, ...(body === undefined ? {} : { payload: body as object }) });
      cells++;
      const ok = want === 'pass' ? ![401, 403, 404, 422].includes(res.status) && res.status < 500 : res.status === want;
      if (!ok) failures.push(`${key} as assigned-only annotator: expected ${want}, got ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
    }
    assert.deepEqual(failures, []);
    assert.ok(cells >= 39, `only ${cells} cells checked`);
  });
});
