import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import type { ReadStream } from 'node:fs';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StaticFile {
  readonly stream: ReadStream;
  readonly size: number;
  readonly contentType: string;
  /** Vite puts content-hashed files under assets/; those never change and may be cached for good. */
  readonly immutable: boolean;
}

/** The built front end (web/dist): its index page and its assets, never anything outside the folder. */
export class WebDist {
  private index: string | null = null;

  constructor(readonly root: string) {}

  /** The SPA's index.html, or null while the front end has not been built. Cached once found. */
  async indexHtml(): Promise<string | null> {
    if (this.index !== null) return this.index;
    try {
      this.index = await readFile(resolve(this.root, 'index.html'), 'utf8');
    } catch {
      return null;
    }
    return this.index;
  }

  /** A file below the root named by a URL path (already percent-decoded), or null when absent or outside it. */
  async file(relativePath: string): Promise<StaticFile | null> {
    if (relativePath.includes('\0')) return null;
    const root = resolve(this.root);
    const path = resolve(root, '.' + sep + relativePath);
    if (!path.startsWith(root + sep)) return null;
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) return null;
    return {
      stream: createReadStream(path),
      size: info.size,
      contentType: CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
      immutable: relativePath.startsWith('assets/'),
    };
  }
}
