import type { ColumnType, Generated } from 'kysely';

/**
 * Table types. Timestamps are ISO-8601 text and booleans are 0/1 integers on both dialects, so rows read the same
 * everywhere; JSON documents are stored as text and parsed by the repositories.
 */
export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  display_name: string;
  is_admin: number;
  created_at: string;
}

export interface TokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** `session` tokens come from login (and back the cookie); `api` tokens are made by the user. */
  kind: 'session' | 'api';
  token_hash: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface ProjectsTable {
  id: Generated<number>;
  owner_id: number;
  name: string;
  description: string;
  project_type: string;
  location: string;
  created_at: string;
  updated_at: string;
  image_count: ColumnType<number, number | undefined, number>;
  annotated_image_count: ColumnType<number, number | undefined, number>;
  annotation_count: ColumnType<number, number | undefined, number>;
  class_count: ColumnType<number, number | undefined, number>;
}

export interface ClassesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  color: string;
  created_at: string;
}

export interface ImagesTable {
  id: Generated<number>;
  project_id: number;
  filename: string;
  original_name: string;
  width: number;
  height: number;
  split: string | null;
  sha256: string;
  mime_type: string;
  size_bytes: number;
  blob_key: string;
  thumbnail_key: string;
  annotation_count: ColumnType<number, number | undefined, number>;
  created_at: string;
}

export interface AnnotationsTable {
  id: Generated<number>;
  image_id: number;
  project_id: number;
  class_id: number;
  annotation_type: string;
  /** JSON text. */
  geometry: string;
  confidence: number | null;
  source: string;
  created_at: string;
  updated_at: string;
}

export interface JobsTable {
  id: Generated<number>;
  name: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  progress: number;
  /** JSON text. */
  payload: string;
  /** JSON text. */
  result: string | null;
  error: string | null;
  project_id: number | null;
  created_by: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface Database {
  users: UsersTable;
  tokens: TokensTable;
  projects: ProjectsTable;
  classes: ClassesTable;
  images: ImagesTable;
  annotations: AnnotationsTable;
  jobs: JobsTable;
  settings: SettingsTable;
}
