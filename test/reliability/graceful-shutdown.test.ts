/**
 * Drill (issue 27, Operations): SIGTERM stops a real server gracefully. It takes no new connection, finishes the
 * request in flight, and exits 0; a job still running past SHUTDOWN_TIMEOUT_S is released back to the queue (not
 * failed) and the next process runs it.
 */
import assert from 'node:assert/strict';
import { get, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { RELEASED_MESSAGE } from '../../src/jobs/jobs.repository.js';
import { multipart } from '../helpers/multipart.js';
import { eventually, serverProcess, type ServerProcess } from '../helpers/server-process.js';

async function upload(server: ServerProcess, projectId: number, files: { filename: string; data: Buffer; contentType: string }[], token: string) {
  const body = multipart(files);
  const res = await fetch(`${server.url}/api/projects/${projectId}/images`, { method: 'POST', headers: { ...body.headers, authorization: `Bearer ${token}` }, body: new Uint8Array(body.payload) });
  return { status: res.status, body: await res.json() };
}

/** Whether a new TCP connection to the server is refused. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('graceful shutdown', { timeout: 300_000 }, () => {
  let server: ServerProcess;
  let token: string;
  before(async () => {
    server = await serverProcess({ SHUTDOWN_TIMEOUT_S: '60' });
    token = await server.login('shutdown@example.com');
  });
  after(() => server?.dispose());

  it('SIGTERM: the request in flight completes with 200, a new connection is refused, the process exits 0', async () => {
    const projectId = (await server.api('POST', '/api/projects', { name: 'in flight' }, token)).body.id as number;
    // Noise does not compress: a file far larger than the socket buffers, so its download is still being sent.
    const data = await sharp({ create: { width: 2000, height: 1500, channels: 3, background: { r: 0, g: 0, b: 0 }, noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
    const uploaded = await upload(server, projectId, [{ filename: 'big.png', data, contentType: 'image/png' }], token);
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    const filename = uploaded.body.images[0].filename as string;

    // The download starts and its reader pauses after the headers.
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      get(`${server.url}/api/projects/${projectId}/images/file/${encodeURIComponent(filename)}`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.pause();
        resolve(res);
      }).on('error', reject);
    });
    assert.equal(response.statusCode, 200);

    const { exited } = server.signal('SIGTERM');
    await eventually(() => refused(server.url), 15_000, 'new connections refused');
    let finished = false;
    void exited.then(() => (finished = true));

    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk)).resume();
    await new Promise((resolve, reject) => response.once('end', resolve).once('error', reject));
    assert.equal(Buffer.concat(chunks).length, data.length, 'the whole file arrived after SIGTERM');
    assert.equal(Buffer.compare(Buffer.concat(chunks), data), 0);
    assert.equal(await exited, 0);
    assert.ok(finished);
  });

  it('a job running past the deadline is released, not failed, and the next process runs it', async () => {
    await server.start({ SHUTDOWN_TIMEOUT_S: '0' });
    token = await server.login('shutdown@example.com');
    const projectId = (await server.api('POST', '/api/projects', { name: 'released' }, token)).body.id as number;
    const images = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        sharp({ create: { width: 800, height: 600, channels: 3, background: { r: i * 10, g: 90, b: 40 }, noise: { type: 'gaussian', mean: 100, sigma: 40 } } }).jpeg().toBuffer(),
      ),
    );
    assert.equal((await upload(server, projectId, images.map((data, i) => ({ filename: `g_${i}.jpg`, data, contentType: 'image/jpeg' })), token)).status, 201);
    const created = await server.api('POST', `/api/projects/${projectId}/versions`, { name: 'slow', augmentation_config: { blur: 20, outputs_per_image: 10, apply_to: 'all' } }, token);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const versionId = created.body.id as number;
    await eventually(async () => (await server.count("select count(*) from jobs where name = 'versions.generate' and status = 'running'")) === 1, 60_000, 'the generation running');

    assert.equal(await server.signal('SIGTERM').exited, 0);
    const jobs = `select count(*) from jobs where name = 'versions.generate'`;
    assert.equal(await server.count(jobs), 1);
    assert.equal(await server.count(`${jobs} and status = 'queued' and message = '${RELEASED_MESSAGE}'`), 1, 'released back to the queue, not failed');

    await server.start();
    token = await server.login('shutdown@example.com');
    await eventually(async () => (await server.api('GET', `/api/projects/${projectId}/versions/${versionId}`, undefined, token)).body.status === 'ready', 120_000, 'the version generated by the next process');
    assert.equal(await server.count(jobs), 1, 'the same job ran again, no new one');
    assert.equal(await server.count(`${jobs} and status = 'succeeded'`), 1);
  });
});
