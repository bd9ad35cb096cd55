/**
 * The typed client of clients/typescript from Node (issue 31): the README's example runs as written, in its own Node
 * process, against a live server; and the client's calls (bearer token, paging by the `Link` header, a download, a
 * multipart upload, error answers) behave as the README says.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { ApiError, createClient } from '../../clients/typescript/index.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url);
const README = new URL('clients/typescript/README.md', ROOT);
const CLIENT = new URL('clients/typescript/index.ts', ROOT);

/** The README's TypeScript example, importing the client from where it is in this checkout. */
async function readmeExample(): Promise<string> {
  const blocks = [...(await readFile(README, 'utf8')).matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.equal(blocks.length, 1, 'the README has one example');
  const example = blocks[0]!;
  assert.ok(example.includes("from './clients/typescript/index.js'"), 'the example imports the client as a script in the repository would');
  return example.replace("'./clients/typescript/index.js'", JSON.stringify(CLIENT.href));
}

describe('the TypeScript client from Node, against a live server', () => {
  it('is typed from the document: routes, operation names, parameters and answers (checked by npm run typecheck)', () => {
    // Never called: the type checker is what this case runs; each line fails to compile without the types, and then
    // `@ts-expect-error` itself is an error.
    const checks = async () => {
      const versa = createClient({ baseUrl: 'http://localhost:8000', token: 't' });
      // @ts-expect-error an operation that does not exist
      await versa.call('listEverything');
      // @ts-expect-error an operation's path parameters are required
      await versa.call('listClasses');
      // @ts-expect-error a body field the operation does not take
      await versa.call('createProject', { body: { name: 'p', project_type: 'classification', colour: 'red' } });
      const project = await versa.call('getProject', { path: { id: 1 } });
      // @ts-expect-error the answer is typed: a project has no `title`
      void project.title;
    };
    assert.equal(typeof checks, 'function');
  });


  let t: TestApp;
  let baseUrl: string;
  let work: string;
  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = await mkdtemp(join(tmpdir(), 'versa-ts-client-'));
  });
  after(async () => {
    await t.close();
    await rm(work, { recursive: true, force: true });
  });

  it("runs the README's example as written: logs in, creates a project and a class, lists them, reads a 404", async () => {
    const email = 'node-script@example.com';
    const password = 'correct horse battery';
    assert.equal((await t.client().post('/api/auth/register', { email, password })).status, 201);
    const script = join(work, 'example.mts');
    await writeFile(script, await readmeExample());
    // As `npx tsx example.mts` would run it; tsx is this repository's, the script sits outside it.
    const { stdout } = await run(process.execPath, ['--import', import.meta.resolve('tsx'), script], {
      cwd: work,
      env: { ...process.env, VERSA_URL: baseUrl, VERSA_EMAIL: email, VERSA_PASSWORD: password },
      timeout: 120_000,
    });
    assert.deepEqual(stdout.trim().split('\n'), ["[ 'sparrow' ]", '404 Project 999999 not found']);
    // What it did is on the server, under that user.
    const user = t.client((await t.client().post('/api/auth/login', { email, password })).body.token);
    const projects = (await user.get('/api/projects')).body as { name: string }[];
    assert.deepEqual(projects.map((p) => p.name), ['Birds']);
  });

  it('sends the bearer token, pages by the Link header, uploads a form, downloads bytes and throws ApiError', async () => {
    const alice = await t.user();
    const anonymous = createClient({ baseUrl });
    await assert.rejects(anonymous.get('/api/projects'), (e: unknown) => e instanceof ApiError && e.status === 401);
    const versa = anonymous.withToken(alice.token);
    const me = await versa.get('/api/auth/me');
    assert.equal(me.email, alice.email);

    const project = await versa.post('/api/projects', { body: { name: 'p', project_type: 'object_detection' } });
    const form = new FormData();
    for (let i = 0; i < 5; i++) {
      const png = await sharp({ create: { width: 8 + i, height: 8, channels: 3, background: { r: 40 * i, g: 0, b: 0 } } }).png().toBuffer();
      form.append('files', new Blob([new Uint8Array(png)], { type: 'image/png' }), `i${i}.png`);
    }
    const uploaded = await versa.postForm('/api/projects/{id}/images', form, { path: { id: project.id } });
    assert.equal(uploaded.results.filter((r) => r.outcome === 'created').length, 5, JSON.stringify(uploaded));

    const seen: string[] = [];
    for await (const image of versa.all('/api/projects/{id}/images', { path: { id: project.id }, query: { limit: 2 } })) seen.push(image.original_name);
    assert.deepEqual(seen.sort(), ['i0.png', 'i1.png', 'i2.png', 'i3.png', 'i4.png']);

    const first = (await versa.page('/api/projects/{id}/images', { path: { id: project.id }, query: { limit: 2 } }));
    assert.equal(first.headers.get('x-total-count'), '5');
    const file = await versa.download('/api/projects/{id}/images/file/{filename}', { path: { id: project.id, filename: first.data[0]!.filename } });
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.equal((await sharp(Buffer.from(await file.arrayBuffer())).metadata()).format, 'png');

    // By operationId, as generated clients name their methods.
    await versa.call('createClass', { path: { id: project.id }, body: { name: 'apple' } });
    const classes = await versa.call('listClasses', { path: { id: project.id } });
    assert.deepEqual(classes.map((c) => c.name), ['apple']);
    assert.deepEqual(await versa.call('getProject', { path: { id: project.id } }), await versa.get('/api/projects/{id}', { path: { id: project.id } }));

    await assert.rejects(
      versa.post('/api/projects', { body: { name: 'q', project_type: 'detection' as 'classification' } }),
      (e: unknown) => e instanceof ApiError && e.status === 422 && /project_type: must be one of object_detection/.test(e.message),
    );
  });
});
