import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ForbiddenError, ValidationError } from '../../http/errors.js';
import type { ModelFormat } from './models.schemas.js';

/** A weights file on disk: where it really is (symlinks resolved), its size and hash. */
export interface ModelFile {
  path: string;
  sizeBytes: number;
  sha256: string;
}

export function formatOf(filename: string): ModelFormat {
  const extension = extname(filename).toLowerCase();
  if (extension === '.onnx') return 'onnx';
  if (extension === '.pt' || extension === '.pth') return 'pt';
  return 'other';
}

/** The extension a stored upload gets: one of a fixed few, so blob keys never carry user text. */
export function storedExtension(format: ModelFormat): string {
  return format === 'other' ? 'bin' : format;
}

function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Resolves a user-given path against a configured root and refuses (403) anything outside it: `..`, absolute paths
 * elsewhere, and symlinks whose target leaves the root (checked on the real path). The root being unset disables
 * the feature (403). A missing file or a directory is a 422.
 */
export async function fileUnderRoot(root: string | null, requested: string, setting: string, loc: (string | number)[]): Promise<string> {
  if (!root) throw new ForbiddenError(`Reading model files from the server is disabled: ${setting} is not set`);
  const outside = () => new ForbiddenError(`${requested} is outside ${setting}; only files under it can be registered`);
  const lexical = isAbsolute(requested) ? resolve(requested) : resolve(root, requested);
  if (!within(resolve(root), lexical)) throw outside();
  let realRoot: string;
  let real: string;
  try {
    realRoot = await realpath(root);
  } catch {
    throw new ForbiddenError(`${setting} (${root}) does not exist on the server`);
  }
  try {
    real = await realpath(lexical);
  } catch {
    throw ValidationError.at(loc, `No such file under ${setting}: ${requested}`);
  }
  if (!within(realRoot, real)) throw outside();
  if (!(await stat(real)).isFile()) throw ValidationError.at(loc, `${requested} is not a file`);
  return real;
}

export async function hashFile(path: string): Promise<ModelFile> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    sizeBytes += chunk.length;
  }
  return { path, sizeBytes, sha256: hash.digest('hex') };
}

/**
 * Streams an upload to a temporary file under `directory`, hashing it on the way; the caller removes it. The
 * stream is expected to fail (multipart's size limit) rather than be cut silently.
 */
export async function receiveToTemp(directory: string, stream: Readable): Promise<ModelFile> {
  await mkdir(directory, { recursive: true });
  const path = join(directory, `${randomBytes(12).toString('hex')}.upload`);
  const hash = createHash('sha256');
  let sizeBytes = 0;
  stream.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    sizeBytes += chunk.length;
  });
  try {
    await pipeline(stream, createWriteStream(path));
  } catch (err) {
    await rm(path, { force: true });
    throw err;
  }
  return { path, sizeBytes, sha256: hash.digest('hex') };
}

export interface DiscoveredWeights {
  path: string;
  task: string;
  run: string;
  file: string;
  format: ModelFormat;
  sizeBytes: number;
  modifiedAt: string;
}

const WEIGHT_FILES = new Set(['best.pt', 'last.pt', 'best.onnx', 'last.onnx']);

/**
 * Ultralytics-style run weights: `<task>/<run>/weights/{best,last}.{pt,onnx}` directly under the root or under its
 * `runs/` folder. Entries whose real path leaves the root (symlinks) are skipped.
 */
export async function discoverRunWeights(root: string): Promise<DiscoveredWeights[]> {
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    return [];
  }
  const found: DiscoveredWeights[] = [];
  for (const base of [realRoot, join(realRoot, 'runs')]) {
    for (const task of (await directories(base)).filter((name) => base !== realRoot || name !== 'runs')) {
      for (const run of await directories(join(base, task))) {
        const weights = join(base, task, run, 'weights');
        let names: string[];
        try {
          names = await readdir(weights);
        } catch {
          continue;
        }
        for (const file of names.filter((n) => WEIGHT_FILES.has(n)).sort()) {
          const path = join(weights, file);
          try {
            const real = await realpath(path);
            const info = await stat(real);
            if (!within(realRoot, real) || !info.isFile()) continue;
            found.push({
              path: relative(realRoot, path),
              task,
              run,
              file: basename(path),
              format: formatOf(file),
              sizeBytes: info.size,
              modifiedAt: info.mtime.toISOString(),
            });
          } catch {
            continue;
          }
        }
      }
    }
  }
  return found;
}

async function directories(path: string): Promise<string[]> {
  try {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return [];
  }
}
