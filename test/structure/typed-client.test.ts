/**
 * One typed API client (issue 31): clients/typescript holds it, free of anything only a browser or only Node has, so
 * the web pages and Node scripts run the same code; the pages reach the API through it (web/src/api.ts), not through
 * fetch calls and response shapes of their own.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLIENT = join(ROOT, 'clients/typescript');
const WEB = join(ROOT, 'web/src');

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.tsx?$/.test(name))
    .map((name) => join(dir, name));
}

/** A file's code without its comments (which may well mention `window` or `fetch(`). */
const code = (file: string) => readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

/** Direct fetch calls in the pages, each with why it does not go through the client. */
const PAGE_FETCHES: Record<string, string> = {
  // Image bytes for the editor's canvas (a file, not an API answer), read as a Blob to decode off the main thread.
  'web/src/editor/image-loader.ts': 'image bytes',
  // Releasing a lock while the page unloads needs `keepalive`, which must outlive the page and its promises.
  'web/src/components/image-lock.ts': 'keepalive on unload',
};

test('the client core uses nothing only a browser or only Node has', () => {
  const files = sources(CLIENT).filter((file) => !file.endsWith('api-types.ts'));
  assert.ok(files.some((file) => file.endsWith('client.ts')), 'clients/typescript/client.ts exists');
  const offending: string[] = [];
  for (const file of files) {
    const text = code(file);
    for (const word of ['window', 'document', 'location', 'XMLHttpRequest', 'localStorage', 'sessionStorage', 'navigator', 'process', 'Buffer', 'require']) {
      if (new RegExp(`\\b${word}\\b`).test(text)) offending.push(`${relative(ROOT, file)} uses ${word}`);
    }
    for (const match of text.matchAll(/from '([^']+)'/g)) {
      if (!match[1]!.startsWith('./')) offending.push(`${relative(ROOT, file)} imports ${match[1]}`);
    }
  }
  assert.deepEqual(offending, []);
});

test('the pages call the API through the typed client, not fetch', () => {
  const calls = sources(WEB)
    .filter((file) => /\bfetch\(/.test(code(file)))
    .map((file) => relative(ROOT, file))
    .filter((file) => !PAGE_FETCHES[file]);
  assert.deepEqual(calls, []);
  // The pages' client is the shared one: web/src/api.ts builds it, it does not carry a copy.
  const api = code(join(WEB, 'api.ts'));
  assert.match(api, /createClient\(/);
  assert.doesNotMatch(api, /\bfetch\(/);
});

test('the pages read API records from the generated types, not from shapes of their own', () => {
  // A page that declares an object type with an API record's identifying fields is writing the record by hand.
  const handWritten: string[] = [];
  for (const file of sources(WEB)) {
    const text = code(file);
    for (const match of text.matchAll(/(?:interface\s+\w+\s*\{|useState<\{|type\s+\w+\s*=\s*\{)([^}]*)\}/g)) {
      const fields = match[1]!;
      if (/\b(project_id|created_at|class_id|annotation_type|project_type|image_count)\??\s*:/.test(fields)) {
        handWritten.push(`${relative(ROOT, file)}: ${match[0].slice(0, 80)}`);
      }
    }
  }
  assert.deepEqual(handWritten, []);
});
