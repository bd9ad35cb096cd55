import { join, resolve } from 'node:path';

/** Everything the process reads from its environment, parsed and validated once at boot. */
export interface Config {
  readonly role: 'api' | 'worker' | 'all';
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Where stored files live (BLOB_STORE): a folder, DATA_DIR/blobs by default, or an S3 bucket. */
  readonly blobStore: BlobStoreConfig;
  /** postgres://… selects PostgreSQL; absent means SQLite at DATA_DIR/versa.db. */
  readonly databaseUrl: string | null;
  readonly redisUrl: string | null;
  /** Redis key prefix of the job queue, so that several instances can share one Redis. */
  readonly queuePrefix: string;
  readonly maxUploadBytes: number;
  readonly maxImagePixels: number;
  /** Root directory that folder imports may read from; null disables folder import. */
  readonly importRoot: string | null;
  /** Largest dataset archive accepted by the import route. */
  readonly maxImportBytes: number;
  /** Annotations one import may carry (all label files together); more is 413. */
  readonly maxImportAnnotations: number;
  /** Entries one import archive may have (and images one dataset may list); more is 413. */
  readonly maxImportEntries: number;
  /** An importing project whose importer has not written for this long is taken as abandoned and removed. */
  readonly importStaleSeconds: number;
  readonly modelsRoot: string | null;
  /** Largest model file accepted by upload (weights are far larger than images). */
  readonly maxModelUploadBytes: number;
  readonly runsRoot: string | null;
  /** The Python interpreter trainers run with (PYTHON; default /usr/bin/python3, which sees Debian's torch). */
  readonly python: string;
  /** The trainers' whole environment: TRAINER_ENV_NAMES taken from the server's, nothing else (no database URL, no secrets). */
  readonly trainerEnv: Readonly<Record<string, string>>;
  /** Training runs of one project admitted to the job queue at once (queued there or running); the rest wait their turn. */
  readonly trainingPerProject: number;
  /** Training runs one account may have waiting to start; one more is 429. */
  readonly trainingQueuedPerUser: number;
  /** Login and register attempts allowed per client IP per minute; failed logins per account are a fifth of it. */
  readonly authAttemptsPerMinute: number;
  /**
   * Proxies whose X-Forwarded-For is believed (Fastify's trustProxy): false (the default: the client address is the
   * connection's) or the proxies' addresses/CIDRs (TRUST_PROXY, comma-separated).
   */
  readonly trustProxy: false | string[];
  readonly logLevel: string;
  /**
   * Measure quality features (blur, brightness, …) at upload, from the pixels the thumbnail is made of; by default
   * they are measured off the request path, by the first quality report that reads them (issue 32, item 10).
   */
  readonly ingestFeatures: boolean;
  /** Folder of third-party plugin modules loaded at start-up; null loads none. */
  readonly pluginsDir: string | null;
  /** URL prefixes a pipeline's webhook step may POST to; empty refuses every webhook. */
  readonly webhookAllowlist: readonly string[];
  /** The bearer token a Prometheus scraper presents to `GET /metrics` (METRICS_TOKEN); null: platform admins only. */
  readonly metricsToken: string | null;
  /** How long SIGTERM waits for in-flight requests and running jobs before releasing the jobs and exiting (SHUTDOWN_TIMEOUT_S). */
  readonly shutdownTimeoutMs: number;
  /** The FFmpeg programs that decode uploaded videos into frames (FFMPEG_PATH, FFPROBE_PATH; found on PATH by default). */
  readonly ffmpeg: { readonly ffmpeg: string; readonly ffprobe: string };
  /**
   * The key that encrypts secrets stored in the database, such as a project storage's S3 credentials (SECRETS_KEY:
   * 32 bytes as 64 hex digits or base64); null: nothing secret can be stored (attaching a storage is refused).
   */
  readonly secretsKey: Buffer | null;
  /** Endpoint URL prefixes a project storage (an S3-compatible bucket) may point at (STORAGE_ALLOWLIST); empty refuses every one. */
  readonly storageAllowlist: readonly string[];
  /** How often each process looks for project storages due for their scheduled sync (STORAGE_SYNC_CHECK_S). */
  readonly storageSyncCheckMs: number;
  /**
   * How long a worker's hold on a running job lasts unrenewed (JOB_LOCK_S; renewed every half of it while the worker
   * lives): a job whose worker died (kill -9, machine lost) goes to another worker within about twice this.
   */
  readonly jobLockMs: number;
}

export type BlobStoreConfig = { readonly kind: 'local'; readonly root: string } | S3BlobStoreConfig;

/**
 * BLOB_STORE=s3://bucket/prefix, with S3_ENDPOINT (absent: AWS), S3_REGION, S3_FORCE_PATH_STYLE=1 (path-style
 * addressing), S3_CHECKSUMS=WHEN_REQUIRED (for back ends that refuse the SDK's default streaming checksums) and
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN (absent: the SDK's own chain, e.g. an instance role).
 */
export interface S3BlobStoreConfig {
  readonly kind: 's3';
  readonly bucket: string;
  /** Key prefix of every object, without a trailing slash; '' for the bucket's root. */
  readonly prefix: string;
  readonly endpoint: string | null;
  readonly region: string;
  readonly forcePathStyle: boolean;
  readonly checksums: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED';
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string } | null;
}

export class ConfigError extends Error {}

/**
 * What a trainer may see of the server's environment: where programs and libraries are (PATH for `yolo`, HOME for a
 * user's site-packages, LD_LIBRARY_PATH and CUDA_VISIBLE_DEVICES for CUDA), locale and temporary folder, and the
 * thread settings the trainers honour (VERSA_TRAIN_THREADS).
 */
export const TRAINER_ENV_NAMES = [
  'PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'LD_LIBRARY_PATH', 'CUDA_VISIBLE_DEVICES',
  'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'VERSA_TRAIN_THREADS', 'YOLO_CONFIG_DIR',
] as const;

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** Comma-separated http(s) URL prefixes, normalised (`https://host/path/`). */
function urlPrefixes(env: NodeJS.ProcessEnv, name: string): string[] {
  const raw = env[name];
  if (!raw) return [];
  return raw.split(',').map((s) => s.trim()).filter(Boolean).map((entry) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new ConfigError(`${name} must list http(s) URLs separated by commas, got "${entry}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} entries must be http or https URLs, got "${entry}"`);
    if (url.username || url.password || url.search || url.hash) throw new ConfigError(`${name} entries may not carry credentials, a query or a fragment: "${entry}"`);
    return url.href;
  });
}

function optionalPath(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name];
  return raw ? resolve(raw) : null;
}

function metricsToken(raw: string | undefined): string | null {
  if (!raw) return null;
  if (raw.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters');
  return raw;
}

function trustProxy(raw: string | undefined): false | string[] {
  if (!raw || raw === 'false') return false;
  if (raw === 'true') throw new ConfigError('TRUST_PROXY=true would believe X-Forwarded-For from anyone: give the proxy addresses');
  const list = raw.split(',').map((part) => part.trim()).filter(Boolean);
  if (list.some((part) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$|^(loopback|linklocal|uniquelocal)$/.test(part))) {
    throw new ConfigError(`TRUST_PROXY must be addresses or CIDRs separated by commas, got "${raw}"`);
  }
  return list;
}

function secretsKey(raw: string | undefined): Buffer | null {
  if (!raw) return null;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError('SECRETS_KEY must be 32 bytes: 64 hex digits or base64 (`openssl rand -hex 32`)');
  return key;
}

function blobStore(env: NodeJS.ProcessEnv, dataDir: string): BlobStoreConfig {
  const raw = env.BLOB_STORE;
  if (!raw || raw === 'local') return { kind: 'local', root: join(dataDir, 'blobs') };
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/([A-Za-z0-9_.\/-]*))?$/.exec(raw);
  const prefix = (match?.[2] ?? '').replace(/\/+$/, '');
  if (!match || (prefix !== '' && prefix.split('/').some((part) => part === '' || part === '.' || part === '..'))) {
    throw new ConfigError(`BLOB_STORE must be "local" or s3://bucket/prefix (letters, digits, . _ - in the prefix), got "${raw}"`);
  }
  const endpoint = env.S3_ENDPOINT || null;
  if (endpoint && !/^https?:\/\/[^/?#@]+\/?$/.test(endpoint)) throw new ConfigError(`S3_ENDPOINT must be an http(s) URL of a server, got "${endpoint}"`);
  const checksums = env.S3_CHECKSUMS || 'WHEN_SUPPORTED';
  if (checksums !== 'WHEN_SUPPORTED' && checksums !== 'WHEN_REQUIRED') throw new ConfigError(`S3_CHECKSUMS must be WHEN_SUPPORTED or WHEN_REQUIRED, got "${checksums}"`);
  const accessKeyId = env.AWS_ACCESS_KEY_ID || '';
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY || '';
  if (!accessKeyId !== !secretAccessKey) throw new ConfigError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both or neither');
  return {
    kind: 's3',
    bucket: match[1],
    prefix,
    endpoint,
    region: env.S3_REGION || env.AWS_REGION || 'us-east-1',
    forcePathStyle: int(env, 'S3_FORCE_PATH_STYLE', 0, 0, 1) === 1,
    checksums,
    credentials: accessKeyId ? { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } : null,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const role = env.VERSA_ROLE ?? 'all';
  if (role !== 'api' && role !== 'worker' && role !== 'all') {
    throw new ConfigError(`VERSA_ROLE must be api, worker or all, got "${role}"`);
  }
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL (leave it unset for the embedded SQLite database)');
  }
  const redisUrl = env.REDIS_URL || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must be a redis:// URL');
  }
  if (role !== 'all' && !redisUrl) {
    throw new ConfigError(`VERSA_ROLE=${role} splits API and workers, which needs REDIS_URL for the job queue`);
  }
  const dataDir = resolve(env.DATA_DIR || './data');
  return Object.freeze({
    role,
    port: int(env, 'PORT', 8000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir,
    blobStore: Object.freeze(blobStore(env, dataDir)),
    databaseUrl,
    redisUrl,
    queuePrefix: env.QUEUE_PREFIX || 'versa',
    maxUploadBytes: int(env, 'MAX_UPLOAD_MB', 50, 1, 10_000) * 1024 * 1024,
    maxImagePixels: int(env, 'MAX_IMAGE_MEGAPIXELS', 100, 1, 10_000) * 1_000_000,
    importRoot: optionalPath(env, 'IMPORT_ROOT'),
    maxImportBytes: int(env, 'MAX_IMPORT_MB', 10_240, 1, 1_000_000) * 1024 * 1024,
    maxImportAnnotations: int(env, 'MAX_IMPORT_ANNOTATIONS', 2_000_000, 1, 1_000_000_000),
    maxImportEntries: int(env, 'MAX_IMPORT_ENTRIES', 100_000, 1, 100_000_000),
    importStaleSeconds: int(env, 'IMPORT_STALE_SECONDS', 120, 1, 86_400),
    modelsRoot: optionalPath(env, 'MODELS_ROOT'),
    maxModelUploadBytes: int(env, 'MAX_MODEL_UPLOAD_MB', 4096, 1, 100_000) * 1024 * 1024,
    runsRoot: optionalPath(env, 'RUNS_ROOT'),
    python: env.PYTHON || '/usr/bin/python3',
    trainerEnv: Object.freeze(Object.fromEntries(TRAINER_ENV_NAMES.flatMap((name) => (env[name] ? [[name, env[name]]] : [])))),
    trainingPerProject: int(env, 'TRAINING_PER_PROJECT', 1, 1, 1000),
    trainingQueuedPerUser: int(env, 'TRAINING_QUEUED_PER_USER', 10, 1, 100_000),
    authAttemptsPerMinute: int(env, 'AUTH_ATTEMPTS_PER_MINUTE', 30, 1, 1_000_000),
    trustProxy: trustProxy(env.TRUST_PROXY),
    logLevel: env.LOG_LEVEL || 'info',
    ingestFeatures: int(env, 'INGEST_FEATURES', 0, 0, 1) === 1,
    pluginsDir: optionalPath(env, 'PLUGINS_DIR'),
    webhookAllowlist: Object.freeze(urlPrefixes(env, 'WEBHOOK_ALLOWLIST')),
    metricsToken: metricsToken(env.METRICS_TOKEN),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_S', 30, 0, 86_400) * 1000,
    ffmpeg: Object.freeze({ ffmpeg: env.FFMPEG_PATH || 'ffmpeg', ffprobe: env.FFPROBE_PATH || 'ffprobe' }),
    secretsKey: secretsKey(env.SECRETS_KEY),
    storageAllowlist: Object.freeze(urlPrefixes(env, 'STORAGE_ALLOWLIST')),
    storageSyncCheckMs: int(env, 'STORAGE_SYNC_CHECK_S', 60, 1, 86_400) * 1000,
    jobLockMs: int(env, 'JOB_LOCK_S', 30, 1, 3600) * 1000,
  });
}
