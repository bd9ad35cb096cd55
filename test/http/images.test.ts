import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart, type FilePart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type Format = 'jpeg' | 'png' | 'webp' | 'tiff' | 'gif' | 'avif';

let shade = 0;
/** A small solid image; every call gets a different colour, so different bytes. */
async function solid(format: Format, width = 40, height = 30): Promise<Buffer> {
  shade++;
  const background = { r: (shade * 37) % 256, g: (shade * 91) % 256, b: (shade * 53) % 256 };
  return sharp({ create: { width, height, channels: 3, background } }).toFormat(format).toBuffer();
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const SVG = Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');

function upload(client: Client, projectId: number, files: FilePart[], fields?: Record<string, string>) {
  const { payload, headers } = multipart(files, fields);
  return client.request({ method: 'POST', url: `/api/projects/${projectId}/images`, payload, headers });
}

/** Every stored file under the data directory's blobs, relative to it. */
async function blobFiles(t: TestApp): Promise<string[]> {
  const root = join(t.dataDir, 'blobs');
  if (!existsSync(root)) return [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name))).sort();
}

async function imageRows(t: TestApp, projectId: number) {
  return t.versa.database.db.selectFrom('images').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
}

async function newProject(client: Client, name = 'images'): Promise<number> {
  const res = await client.post('/api/projects', { name });
  assert.equal(res.status, 201);
  return res.body.id;
}

describe('images', () => {
  let t: TestApp;
  let alice: Awaited<ReturnType<TestApp['user']>>;
  let bob: Awaited<ReturnType<TestApp['user']>>;
  before(async () => {
    t = await startTestApp();
    // The first user becomes instance admin and sees every project; the tests act as two plain users.
    await t.user();
    alice = await t.user();
    bob = await t.user();
  });
  after(() => t.close());

  describe('upload', () => {
    it('stores a JPEG with its size, hash, thumbnail and counter', async () => {
      const projectId = await newProject(alice);
      const data = await solid('jpeg', 64, 48);
      const res = await upload(alice, projectId, [{ filename: 'Holiday Photo (1).JPG', data, contentType: 'image/jpeg' }]);
      assert.equal(res.status, 201);
      assert.deepEqual(
        { created: res.body.created, duplicates: res.body.duplicates, rejected: res.body.rejected },
        { created: 1, duplicates: 0, rejected: 0 },
      );
      const image = res.body.images[0];
      assert.equal(image.project_id, projectId);
      assert.equal(image.filename, 'Holiday_Photo_1.jpg');
      assert.equal(image.original_name, 'Holiday Photo (1).JPG');
      assert.equal(image.width, 64);
      assert.equal(image.height, 48);
      assert.equal(image.split, null);
      assert.equal(image.annotation_count, 0);
      assert.equal(image.sha256, sha256(data));
      assert.equal(image.size_bytes, data.length);
      assert.equal(image.mime_type, 'image/jpeg');
      assert.match(image.created_at, /^\d{4}-\d\d-\d\dT/);
      assert.deepEqual(res.body.results, [{ original_name: 'Holiday Photo (1).JPG', outcome: 'created', status: 201, image_id: image.id }]);

      assert.deepEqual(await blobFiles(t), [
        `projects/${projectId}/images/${image.sha256}.jpg`,
        `projects/${projectId}/thumbs/${image.sha256}.webp`,
      ]);
      assert.equal((await alice.get(`/api/projects/${projectId}`)).body.image_count, 1);
    });

    it('tells the type by the bytes: every accepted format, a PNG named .jpg, SVG and text refused with 415', async () => {
      const projectId = await newProject(alice);
      const formats: [Format, string, string][] = [
        ['jpeg', 'jpg', 'image/jpeg'],
        ['png', 'png', 'image/png'],
        ['webp', 'webp', 'image/webp'],
        ['tiff', 'tiff', 'image/tiff'],
        ['gif', 'gif', 'image/gif'],
        ['avif', 'avif', 'image/avif'],
      ];
      for (const [format, ext, mime] of formats) {
        const res = await upload(alice, projectId, [{ filename: `sample-${format}.bin`, data: await solid(format, 20, 10) }]);
        assert.equal(res.status, 201, `${format}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.images[0].filename, `sample-${format}.${ext}`);
        assert.equal(res.body.images[0].mime_type, mime);
        assert.deepEqual([res.body.images[0].width, res.body.images[0].height], [20, 10]);
      }

      const png = await upload(alice, projectId, [{ filename: 'disguised.jpg', data: await solid('png'), contentType: 'image/jpeg' }]);
      assert.equal(png.status, 201);
      assert.equal(png.body.images[0].filename, 'disguised.png');
      assert.equal(png.body.images[0].mime_type, 'image/png');

      const before = await blobFiles(t);
      for (const [filename, data] of [['vector.png', SVG], ['notes.png', Buffer.from('hello, not an image\n')]] as const) {
        const res = await upload(alice, projectId, [{ filename, data, contentType: 'image/png' }]);
        assert.equal(res.status, 415, filename);
        assert.match(res.body.detail, /Unsupported file type/);
        assert.equal(res.body.results[0].outcome, 'rejected');
        assert.equal(res.body.results[0].status, 415);
      }
      assert.equal((await imageRows(t, projectId)).length, 7);
      assert.deepEqual(await blobFiles(t), before);
    });

    it('applies EXIF orientation to width/height and the thumbnail but keeps the original bytes', async () => {
      const projectId = await newProject(alice);
      // Red left half, blue right half; orientation 6 displays it turned 90° clockwise, so red ends up on top.
      const data = await sharp({ create: { width: 60, height: 20, channels: 3, background: 'red' } })
        .composite([{ input: { create: { width: 30, height: 20, channels: 3, background: 'blue' } }, left: 30, top: 0 }])
        .jpeg()
        .withMetadata({ orientation: 6 })
        .toBuffer();
      const res = await upload(alice, projectId, [{ filename: 'rotated.jpg', data }]);
      assert.equal(res.status, 201);
      const image = res.body.images[0];
      assert.deepEqual([image.width, image.height], [20, 60]);

      const file = await alice.request({ method: 'GET', url: `/api/projects/${projectId}/images/file/${image.filename}` });
      assert.equal(file.status, 200);
      assert.equal(file.headers['content-type'], 'image/jpeg');
      assert.equal(sha256(file.raw), sha256(data));
      assert.equal(sha256(file.raw), image.sha256);
      assert.equal(file.headers.etag, `"${image.sha256}"`);
      assert.match(String(file.headers['cache-control']), /private/);

      const thumb = await alice.request({ method: 'GET', url: `/api/images/${image.id}/thumbnail` });
      assert.equal(thumb.status, 200);
      assert.equal(thumb.headers['content-type'], 'image/webp');
      const { data: pixels, info } = await sharp(thumb.raw).raw().toBuffer({ resolveWithObject: true });
      assert.equal(info.format, 'raw');
      assert.deepEqual([info.width, info.height], [20, 60]);
      const at = (x: number, y: number) => [...pixels.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
      const [topR, , topB] = at(10, 5);
      const [bottomR, , bottomB] = at(10, 55);
      assert.ok(topR > 200 && topB < 60, `top should be red, got ${at(10, 5)}`);
      assert.ok(bottomB > 200 && bottomR < 60, `bottom should be blue, got ${at(10, 55)}`);
    });

    it('makes thumbnails with the longest side 256', async () => {
      const projectId = await newProject(alice);
      const res = await upload(alice, projectId, [{ filename: 'wide.png', data: await solid('png', 800, 200) }]);
      const thumb = await alice.request({ method: 'GET', url: `/api/images/${res.body.images[0].id}/thumbnail` });
      const meta = await sharp(thumb.raw).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 256, 64]);
    });

    it('stores identical bytes once and reports them as duplicates', async () => {
      const projectId = await newProject(alice);
      const data = await solid('png');
      const first = await upload(alice, projectId, [{ filename: 'one.png', data }]);
      assert.equal(first.status, 201);
      const blobs = await blobFiles(t);

      const again = await upload(alice, projectId, [{ filename: 'other-name.png', data }]);
      assert.equal(again.status, 200);
      assert.deepEqual([again.body.created, again.body.duplicates, again.body.rejected], [0, 1, 0]);
      assert.equal(again.body.results[0].outcome, 'duplicate');
      assert.equal(again.body.results[0].status, 200);
      assert.equal(again.body.results[0].image_id, first.body.images[0].id);
      assert.equal(again.body.images[0].filename, 'one.png');

      const fresh = await solid('png');
      const inOneRequest = await upload(alice, projectId, [
        { filename: 'a.png', data: fresh },
        { filename: 'b.png', data: fresh },
      ]);
      assert.equal(inOneRequest.status, 201);
      assert.deepEqual(inOneRequest.body.results.map((r: any) => r.outcome), ['created', 'duplicate']);
      assert.equal(inOneRequest.body.images[0].id, inOneRequest.body.images[1].id);

      assert.equal((await imageRows(t, projectId)).length, 2);
      assert.equal((await alice.get(`/api/projects/${projectId}`)).body.image_count, 2);
      assert.equal((await blobFiles(t)).length, blobs.length + 2);

      // The same bytes in another project are that project's own image.
      const otherProject = await newProject(alice);
      assert.equal((await upload(alice, otherProject, [{ filename: 'one.png', data }])).status, 201);
    });

    it('keeps concurrent uploads of the same bytes to one image and of the same name to distinct names', async () => {
      const projectId = await newProject(alice);
      const data = await solid('png');
      const same = await Promise.all([1, 2, 3].map(() => upload(alice, projectId, [{ filename: 'x.png', data }])));
      assert.deepEqual(same.map((r) => r.status).sort(), [200, 200, 201]);
      assert.equal(new Set(same.map((r) => r.body.images[0].id)).size, 1);

      const [first, second] = [await solid('png'), await solid('png')];
      const named = await Promise.all([first, second].map((bytes) => upload(alice, projectId, [{ filename: 'same.png', data: bytes }])));
      assert.deepEqual(named.map((r) => r.status), [201, 201]);
      assert.deepEqual(
        named.map((r) => r.body.images[0].filename).sort(),
        ['same.png', `same-${sha256(named[0].body.images[0].filename === 'same.png' ? second : first).slice(0, 8)}.png`].sort(),
      );
      assert.equal((await imageRows(t, projectId)).length, 3);
      assert.equal((await alice.get(`/api/projects/${projectId}`)).body.image_count, 3);
      assert.equal((await blobFiles(t)).filter((f) => f.startsWith(`projects/${projectId}/`)).length, 6);
    });

    it('gives a taken file name the start of the content hash', async () => {
      const projectId = await newProject(alice);
      const first = await upload(alice, projectId, [{ filename: 'frame.jpg', data: await solid('jpeg') }]);
      const secondData = await solid('jpeg');
      const second = await upload(alice, projectId, [{ filename: 'frame.jpg', data: secondData }]);
      assert.equal(first.body.images[0].filename, 'frame.jpg');
      assert.equal(second.body.images[0].filename, `frame-${sha256(secondData).slice(0, 8)}.jpg`);
      const evil = await upload(alice, projectId, [{ filename: '../../etc/pass wd', data: await solid('jpeg') }]);
      assert.equal(evil.body.images[0].filename, 'pass_wd.jpg');
    });

    it('stores the good files of a mixed batch and leaves nothing of the bad ones', async () => {
      const projectId = await newProject(alice);
      const good = await solid('jpeg');
      const truncated = (await solid('jpeg', 200, 200)).subarray(0, 300);
      const res = await upload(alice, projectId, [
        { filename: 'good.jpg', data: good },
        { filename: 'drawing.svg', data: SVG },
        { filename: 'broken.jpg', data: truncated },
        { filename: 'empty.png', data: Buffer.alloc(0) },
      ]);
      assert.equal(res.status, 201);
      assert.deepEqual(
        res.body.results.map((r: any) => [r.original_name, r.outcome, r.status]),
        [['good.jpg', 'created', 201], ['drawing.svg', 'rejected', 415], ['broken.jpg', 'rejected', 422], ['empty.png', 'rejected', 422]],
      );
      assert.match(res.body.results[2].detail, /could not be decoded/);
      assert.deepEqual([res.body.created, res.body.duplicates, res.body.rejected], [1, 0, 3]);
      assert.equal(res.body.images.length, 1);
      const rows = await imageRows(t, projectId);
      assert.deepEqual(rows.map((r) => r.original_name), ['good.jpg']);
      const files = (await blobFiles(t)).filter((f) => f.startsWith(`projects/${projectId}/`));
      assert.deepEqual(files, [`projects/${projectId}/images/${sha256(good)}.jpg`, `projects/${projectId}/thumbs/${sha256(good)}.webp`]);

      const allBad = await upload(alice, projectId, [
        { filename: 'broken.jpg', data: truncated },
        { filename: 'drawing.svg', data: SVG },
      ]);
      assert.equal(allBad.status, 422);
      assert.match(allBad.body.detail, /All 2 files were rejected/);
      assert.equal(allBad.body.results.length, 2);
      assert.equal((await imageRows(t, projectId)).length, 1);
    });

    it('needs file parts named "files" (422) and a well-formed body (400), and then writes nothing', async () => {
      const projectId = await newProject(alice);
      const onlyFields = await upload(alice, projectId, [], { note: 'no files here' });
      assert.equal(onlyFields.status, 422);
      assert.deepEqual(onlyFields.body.detail[0].loc, ['body', 'files']);
      const wrongName = await upload(alice, projectId, [{ name: 'file', filename: 'a.jpg', data: await solid('jpeg') }]);
      assert.equal(wrongName.status, 422);
      const json = await alice.post(`/api/projects/${projectId}/images`, { files: ['a.jpg'] });
      assert.equal(json.status, 422);
      assert.deepEqual(json.body.detail[0].loc, ['body', 'files']);

      // A body cut off after a complete first file: the request fails and the first file is not kept.
      const { payload, headers } = multipart([
        { filename: 'kept.jpg', data: await solid('jpeg') },
        { filename: 'cut.jpg', data: await solid('jpeg') },
      ]);
      const cut = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, payload: payload.subarray(0, payload.length - 120), headers });
      assert.equal(cut.status, 400);
      assert.equal(typeof cut.body.detail, 'string');
      assert.equal((await imageRows(t, projectId)).length, 0);
      assert.equal((await alice.get(`/api/projects/${projectId}`)).body.image_count, 0);
      assert.deepEqual((await blobFiles(t)).filter((f) => f.startsWith(`projects/${projectId}/`)), []);
    });

    it('answers 401 without credentials, 404 for unknown or foreign projects, 422 for a bad id', async () => {
      const projectId = await newProject(alice);
      const data = await solid('jpeg');
      const anonymous = await upload(t.client(), projectId, [{ filename: 'a.jpg', data }]);
      assert.equal(anonymous.status, 401);
      const foreign = await upload(bob, projectId, [{ filename: 'a.jpg', data }]);
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.detail, `Project ${projectId} not found`);
      assert.equal((await upload(alice, 999_999, [{ filename: 'a.jpg', data }])).status, 404);
      const badId = await upload(alice, 'abc' as unknown as number, [{ filename: 'a.jpg', data }]);
      assert.equal(badId.status, 422);
      assert.deepEqual(badId.body.detail[0].loc, ['path', 'id']);
      assert.equal((await imageRows(t, projectId)).length, 0);
      assert.deepEqual((await blobFiles(t)).filter((f) => f.startsWith(`projects/${projectId}/`)), []);
    });
  });

  describe('limits', () => {
    let limited: TestApp;
    before(async () => (limited = await startTestApp({ MAX_UPLOAD_MB: '1', MAX_IMAGE_MEGAPIXELS: '1' })));
    after(() => limited.close());

    it('refuses a file over the size limit with 413 and keeps the others', async () => {
      const user = await limited.user();
      const projectId = await newProject(user);
      const small = await solid('jpeg');
      const big = Buffer.concat([await solid('jpeg'), Buffer.alloc(1024 * 1024 + 1)]);
      const alone = await upload(user, projectId, [{ filename: 'big.jpg', data: big }]);
      assert.equal(alone.status, 413);
      assert.match(alone.body.detail, /limit of 1 MB/);
      const mixed = await upload(user, projectId, [{ filename: 'big.jpg', data: big }, { filename: 'small.jpg', data: small }]);
      assert.equal(mixed.status, 201);
      assert.deepEqual(mixed.body.results.map((r: any) => [r.outcome, r.status]), [['rejected', 413], ['created', 201]]);
      assert.deepEqual((await imageRows(limited, projectId)).map((r) => r.original_name), ['small.jpg']);
      assert.equal((await blobFiles(limited)).length, 2);
    });

    it('refuses an image over the pixel limit with 413 before decoding it', async () => {
      const user = await limited.user();
      const projectId = await newProject(user);
      const tooMany = await upload(user, projectId, [{ filename: 'huge.png', data: await solid('png', 1001, 1000) }]);
      assert.equal(tooMany.status, 413);
      assert.match(tooMany.body.detail, /1,001,000 pixels; the limit is 1,000,000/);
      assert.equal((await imageRows(limited, projectId)).length, 0);
      const atLimit = await upload(user, projectId, [{ filename: 'ok.png', data: await solid('png', 1000, 1000) }]);
      assert.equal(atLimit.status, 201);
    });
  });

  describe('list', () => {
    let projectId: number;
    let ids: number[];
    before(async () => {
      projectId = await newProject(alice);
      const files = await Promise.all([1, 2, 3, 4, 5].map(async (n) => ({ filename: `img${n}.png`, data: await solid('png', 8, 8) })));
      const res = await upload(alice, projectId, files);
      ids = res.body.images.map((i: any) => i.id);
      assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'ids follow the order of the request');
    });

    it('pages in id order with X-Total-Count and a Link to the next page', async () => {
      const first = await alice.get(`/api/projects/${projectId}/images?limit=2`);
      assert.equal(first.status, 200);
      assert.equal(first.headers['x-total-count'], '5');
      assert.deepEqual(first.body.map((i: any) => i.id), ids.slice(0, 2));
      assert.equal(first.body[0].filename, 'img1.png');
      assert.equal(first.body[0].blob_key, undefined);
      const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))![1];
      assert.equal(next, `/api/projects/${projectId}/images?limit=2&after=${ids[1]}`);
      const second = await alice.get(next);
      assert.deepEqual(second.body.map((i: any) => i.id), ids.slice(2, 4));
      const byOffset = await alice.get(`/api/projects/${projectId}/images?limit=3&offset=3`);
      assert.deepEqual(byOffset.body.map((i: any) => i.id), ids.slice(3));
      assert.equal(byOffset.headers.link, undefined);
      const all = await alice.get(`/api/projects/${projectId}/images`);
      assert.equal(all.body.length, 5);
      const pastEnd = await alice.get(`/api/projects/${projectId}/images?offset=10`);
      assert.deepEqual(pastEnd.body, []);
      assert.equal(pastEnd.headers['x-total-count'], '5');
    });

    it('answers every offset with the same page whether it walks the index forwards or backwards', async () => {
      for (let offset = 0; offset <= 6; offset++) {
        for (const limit of [1, 2, 4]) {
          const page = await alice.get(`/api/projects/${projectId}/images?limit=${limit}&offset=${offset}`);
          assert.deepEqual(page.body.map((i: any) => i.id), ids.slice(offset, offset + limit), `offset ${offset}, limit ${limit}`);
        }
      }
    });

    it('filters by split, counting only that split', async () => {
      assert.equal((await alice.patch(`/api/images/${ids[1]}`, { split: 'valid' })).status, 200);
      assert.equal((await alice.patch(`/api/images/${ids[3]}`, { split: 'valid' })).status, 200);
      assert.equal((await alice.patch(`/api/images/${ids[4]}`, { split: 'train' })).status, 200);
      const valid = await alice.get(`/api/projects/${projectId}/images?split=valid`);
      assert.deepEqual(valid.body.map((i: any) => i.id), [ids[1], ids[3]]);
      assert.equal(valid.headers['x-total-count'], '2');
      const validAfter = await alice.get(`/api/projects/${projectId}/images?split=valid&after=${ids[1]}`);
      assert.deepEqual(validAfter.body.map((i: any) => i.id), [ids[3]]);
      const validOffset = await alice.get(`/api/projects/${projectId}/images?split=valid&offset=1&limit=1`);
      assert.deepEqual(validOffset.body.map((i: any) => i.id), [ids[3]]);
      const test = await alice.get(`/api/projects/${projectId}/images?split=test`);
      assert.deepEqual(test.body, []);
      assert.equal(test.headers['x-total-count'], '0');
    });

    it('filters by class and by annotated or not, composing with split, paging and the total', async () => {
      const cat = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'cat' })).body.id;
      const dog = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'dog' })).body.id;
      const box = { x: 1, y: 1, width: 4, height: 4 };
      // ids[0]: cat; ids[1]: cat and dog (twice); ids[3]: dog; ids[2] and ids[4]: nothing.
      for (const [image, cls] of [[ids[0], cat], [ids[1], cat], [ids[1], dog], [ids[1], dog], [ids[3], dog]]) {
        const res = await alice.post(`/api/images/${image}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: box });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
      const list = async (query: string) => {
        const res = await alice.get(`/api/projects/${projectId}/images?${query}`);
        assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
        return { ids: res.body.map((i: any) => i.id), total: Number(res.headers['x-total-count']), link: res.headers.link };
      };
      assert.deepEqual(await list(`class_id=${cat}`), { ids: [ids[0], ids[1]], total: 2, link: undefined });
      assert.deepEqual(await list(`class_id=${dog}`), { ids: [ids[1], ids[3]], total: 2, link: undefined }, 'an image counts once');
      assert.deepEqual(await list('annotated=true'), { ids: [ids[0], ids[1], ids[3]], total: 3, link: undefined });
      assert.deepEqual(await list('annotated=false'), { ids: [ids[2], ids[4]], total: 2, link: undefined });
      // ids[1] and ids[3] are in valid (the split test above).
      assert.deepEqual(await list(`class_id=${cat}&split=valid`), { ids: [ids[1]], total: 1, link: undefined });
      assert.deepEqual(await list('annotated=false&split=train'), { ids: [ids[4]], total: 1, link: undefined });
      assert.deepEqual(await list(`class_id=${dog}&annotated=false`), { ids: [], total: 0, link: undefined });
      assert.deepEqual(await list(`class_id=${dog}&review_state=unreviewed`), { ids: [ids[1], ids[3]], total: 2, link: undefined });
      assert.deepEqual(await list(`class_id=${dog}&review_state=pending`), { ids: [], total: 0, link: undefined });
      // Paging through a filtered list by cursor and by offset.
      const first = await list('annotated=true&limit=2');
      assert.deepEqual(first.ids, [ids[0], ids[1]]);
      assert.equal(first.total, 3);
      const next = /<([^>]+)>; rel="next"/.exec(String(first.link))![1];
      assert.match(next, /annotated=true/);
      const second = await alice.get(next);
      assert.deepEqual(second.body.map((i: any) => i.id), [ids[3]]);
      assert.equal(second.headers['x-total-count'], '3');
      assert.deepEqual((await list(`class_id=${dog}&offset=1&limit=1`)).ids, [ids[3]]);
      assert.deepEqual((await list(`annotated=false&after=${ids[2]}`)).ids, [ids[4]]);
      // Deleting the last annotation of a class takes the image out of that class's list.
      const dogOn3 = (await alice.get(`/api/images/${ids[3]}/annotations`)).body[0].id;
      assert.equal((await alice.delete(`/api/annotations/${dogOn3}`)).status, 204);
      assert.deepEqual(await list(`class_id=${dog}`), { ids: [ids[1]], total: 1, link: undefined });
      assert.deepEqual((await list('annotated=false')).ids, [ids[2], ids[3], ids[4]]);
    });

    it('lists each image\'s open suggestions apart from its annotations, by cursor and by offset (issue 30)', async () => {
      const ids: number[] = (await alice.get(`/api/projects/${projectId}/images`)).body.map((i: any) => i.id);
      const cls = (await alice.get(`/api/projects/${projectId}/classes`)).body[0].id;
      const suggest = (image: number) => alice.post(`/api/images/${image}/annotations`, {
        class_id: cls, annotation_type: 'bbox', geometry: { x: 2, y: 2, width: 3, height: 3 }, status: 'suggested', source: 'model:1', confidence: 0.5,
      });
      const first = (await suggest(ids[2])).body.id;
      await suggest(ids[2]);
      const counts = async (query: string) => (await alice.get(`/api/projects/${projectId}/images?${query}`)).body
        .map((i: any) => [i.id, i.annotation_count, i.suggestion_count]);
      const before = await counts('');
      assert.deepEqual(before.find((row: number[]) => row[0] === ids[2]), [ids[2], 0, 2], 'suggestions are not annotations');
      assert.ok(before.filter((row: number[]) => row[0] !== ids[2]).every((row: number[]) => row[2] === 0));
      assert.deepEqual(await counts(`after=${ids[1]}&limit=1`), [[ids[2], 0, 2]]);
      assert.deepEqual(await counts(`offset=2&limit=1`), [[ids[2], 0, 2]]);
      assert.equal((await alice.post(`/api/annotations/${first}/accept`, {})).status, 200);
      assert.deepEqual(await counts(`offset=2&limit=1`), [[ids[2], 1, 1]]);
    });

    it('answers 404 for a class of another project or no class, 422 for a bad class id or annotated value', async () => {
      const otherProject = await newProject(alice, 'other');
      const foreign = (await alice.post(`/api/projects/${otherProject}/classes`, { name: 'foreign' })).body.id;
      for (const classId of [foreign, 999999]) {
        const res = await alice.get(`/api/projects/${projectId}/images?class_id=${classId}`);
        assert.equal(res.status, 404, String(classId));
        assert.match(res.body.detail, /class/i);
      }
      for (const query of ['class_id=0', 'class_id=abc', 'class_id=-3', 'class_id=1.5', 'annotated=maybe', 'annotated=']) {
        const res = await alice.get(`/api/projects/${projectId}/images?${query}`);
        assert.equal(res.status, 422, query);
        assert.equal(res.body.detail[0].loc[0], 'query');
      }
      // A stranger still gets 404 for the project before any class is looked at.
      const own = (await alice.get(`/api/projects/${projectId}/classes`)).body[0].id;
      assert.equal((await bob.get(`/api/projects/${projectId}/images?class_id=${own}`)).status, 404);
      assert.equal((await t.client().get(`/api/projects/${projectId}/images?annotated=true`)).status, 401);
    });

    it('answers 422 for bad paging or split, 404 for foreign or unknown projects, 401 anonymously', async () => {
      for (const query of ['split=holdout', 'limit=0', 'limit=10001', 'offset=-1', 'after=abc']) {
        const res = await alice.get(`/api/projects/${projectId}/images?${query}`);
        assert.equal(res.status, 422, query);
        assert.equal(res.body.detail[0].loc[0], 'query');
      }
      assert.equal((await alice.get('/api/projects/abc/images')).status, 422);
      assert.equal((await bob.get(`/api/projects/${projectId}/images`)).status, 404);
      assert.equal((await alice.get('/api/projects/999999/images')).status, 404);
      assert.equal((await t.client().get(`/api/projects/${projectId}/images`)).status, 401);
    });
  });

  describe('one image', () => {
    let projectId: number;
    let image: any;
    before(async () => {
      projectId = await newProject(alice);
      image = (await upload(alice, projectId, [{ filename: 'single.webp', data: await solid('webp') }])).body.images[0];
    });

    it('GET returns it; 404 for foreign or unknown ids, 422 for a bad id, 401 anonymously', async () => {
      const res = await alice.get(`/api/images/${image.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, image);
      const foreign = await bob.get(`/api/images/${image.id}`);
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.detail, `Image ${image.id} not found`);
      assert.equal((await alice.get('/api/images/999999')).status, 404);
      assert.equal((await alice.get('/api/images/abc')).status, 422);
      assert.equal((await t.client().get(`/api/images/${image.id}`)).status, 401);
    });

    it('PATCH sets and clears the split; bad bodies are 422 and change nothing', async () => {
      const set = await alice.patch(`/api/images/${image.id}`, { split: 'test' });
      assert.equal(set.status, 200);
      assert.equal(set.body.split, 'test');
      for (const body of [{ split: 'holdout' }, {}, { split: 3 }]) {
        const res = await alice.patch(`/api/images/${image.id}`, body);
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.equal(res.body.detail[0].loc[0], 'body');
      }
      assert.equal((await alice.get(`/api/images/${image.id}`)).body.split, 'test');
      assert.equal((await bob.patch(`/api/images/${image.id}`, { split: 'train' })).status, 404);
      assert.equal((await alice.patch('/api/images/999999', { split: 'train' })).status, 404);
      assert.equal((await t.client().patch(`/api/images/${image.id}`, { split: 'train' })).status, 401);
      assert.equal((await alice.get(`/api/images/${image.id}`)).body.split, 'test');
      const cleared = await alice.patch(`/api/images/${image.id}`, { split: null });
      assert.equal(cleared.status, 200);
      assert.equal(cleared.body.split, null);
    });

    it('serves the file by stored name only; unknown, traversal and foreign names are 404', async () => {
      const url = `/api/projects/${projectId}/images/file/${image.filename}`;
      const ok = await alice.get(url);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['content-type'], 'image/webp');
      assert.equal(sha256(ok.raw), image.sha256);
      const cached = await alice.request({ method: 'GET', url, headers: { 'if-none-match': `"${image.sha256}"` } });
      assert.equal(cached.status, 304);
      assert.equal(cached.raw.length, 0);
      for (const name of ['missing.webp', '..%2F..%2Fversa.db', '%2E%2E', `..%2Fimages%2F${image.sha256}.webp`]) {
        const res = await alice.get(`/api/projects/${projectId}/images/file/${name}`);
        assert.equal(res.status, 404, name);
      }
      assert.equal((await bob.get(url)).status, 404);
      assert.equal((await t.client().get(url)).status, 401);
      assert.equal((await alice.get(`/api/projects/abc/images/file/${image.filename}`)).status, 422);
    });

    it('serves the thumbnail; 404 for foreign or unknown ids, 401 anonymously', async () => {
      const ok = await alice.get(`/api/images/${image.id}/thumbnail`);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['content-type'], 'image/webp');
      assert.equal(ok.headers.etag, `"${image.sha256}"`);
      assert.equal((await bob.get(`/api/images/${image.id}/thumbnail`)).status, 404);
      assert.equal((await alice.get('/api/images/999999/thumbnail')).status, 404);
      assert.equal((await alice.get('/api/images/abc/thumbnail')).status, 422);
      assert.equal((await t.client().get(`/api/images/${image.id}/thumbnail`)).status, 401);
    });
  });

  describe('delete', () => {
    /** Annotations as the annotations module stores them, with the counters it keeps. */
    async function annotate(projectId: number, imageId: number, count: number) {
      const db = t.versa.database.db;
      const now = new Date().toISOString();
      let cls = await db.selectFrom('classes').select('id').where('project_id', '=', projectId).executeTakeFirst();
      if (!cls) {
        cls = await db.insertInto('classes').values({ project_id: projectId, name: 'thing', color: '#ff0000', created_at: now }).returning('id').executeTakeFirstOrThrow();
      }
      for (let i = 0; i < count; i++) {
        await db.insertInto('annotations').values({
          image_id: imageId, project_id: projectId, class_id: cls.id, annotation_type: 'bbox',
          geometry: JSON.stringify({ x: 1, y: 1, width: 2, height: 2 }), confidence: null, source: 'manual', created_at: now, updated_at: now,
        }).execute();
      }
      await db.updateTable('images').set((eb) => ({ annotation_count: eb('annotation_count', '+', count) })).where('id', '=', imageId).execute();
      await db.updateTable('projects').set((eb) => ({
        annotation_count: eb('annotation_count', '+', count),
        annotated_image_count: eb('annotated_image_count', '+', 1),
      })).where('id', '=', projectId).execute();
    }

    it('deletes an image with its annotations and files and updates the counters', async () => {
      const projectId = await newProject(alice);
      const res = await upload(alice, projectId, [
        { filename: 'a.jpg', data: await solid('jpeg') },
        { filename: 'b.jpg', data: await solid('jpeg') },
      ]);
      const [a, b] = res.body.images;
      await annotate(projectId, a.id, 2);
      await annotate(projectId, b.id, 1);
      const before = await alice.get(`/api/projects/${projectId}`);
      assert.deepEqual([before.body.image_count, before.body.annotation_count, before.body.annotated_image_count], [2, 3, 2]);

      assert.equal((await bob.delete(`/api/images/${a.id}`)).status, 404);
      assert.equal((await t.client().delete(`/api/images/${a.id}`)).status, 401);
      assert.equal((await alice.delete('/api/images/abc')).status, 422);
      assert.equal((await imageRows(t, projectId)).length, 2);

      const deleted = await alice.delete(`/api/images/${a.id}`);
      assert.equal(deleted.status, 204);
      assert.equal(deleted.headers['x-deleted-annotations'], '2');
      assert.equal(deleted.raw.length, 0);
      const after = await alice.get(`/api/projects/${projectId}`);
      assert.deepEqual([after.body.image_count, after.body.annotation_count, after.body.annotated_image_count], [1, 1, 1]);
      assert.equal((await t.versa.database.db.selectFrom('annotations').select('id').where('image_id', '=', a.id).execute()).length, 0);
      const files = await blobFiles(t);
      assert.ok(!files.some((f) => f.includes(a.sha256)));
      assert.ok(files.some((f) => f.includes(b.sha256)));
      assert.equal((await alice.get(`/api/images/${a.id}`)).status, 404);
      assert.equal((await alice.delete(`/api/images/${a.id}`)).status, 404);

      const unannotated = await upload(alice, projectId, [{ filename: 'c.jpg', data: await solid('jpeg') }]);
      const plain = await alice.delete(`/api/images/${unannotated.body.images[0].id}`);
      assert.equal(plain.headers['x-deleted-annotations'], '0');
      assert.equal((await alice.get(`/api/projects/${projectId}`)).body.annotated_image_count, 1);
    });

    it('bulk-deletes what the caller may delete and reports the rest as not found', async () => {
      const projectId = await newProject(alice);
      const otherProjectId = await newProject(alice, 'other');
      const bobProjectId = await newProject(bob, 'bob');
      const mine = (await upload(alice, projectId, [
        { filename: 'a.png', data: await solid('png') },
        { filename: 'b.png', data: await solid('png') },
        { filename: 'c.png', data: await solid('png') },
      ])).body.images.map((i: any) => i.id);
      const elsewhere = (await upload(alice, otherProjectId, [{ filename: 'd.png', data: await solid('png') }])).body.images[0].id;
      const bobs = (await upload(bob, bobProjectId, [{ filename: 'e.png', data: await solid('png') }])).body.images[0].id;
      await annotate(projectId, mine[0], 3);

      const scoped = await alice.post('/api/images/bulk-delete', { ids: [mine[0], mine[1], elsewhere, bobs, 999999, mine[0]], project_id: projectId });
      assert.equal(scoped.status, 200);
      assert.deepEqual(scoped.body, { deleted: 2, deleted_annotations: 3, not_found: [elsewhere, bobs, 999999] });
      const project = await alice.get(`/api/projects/${projectId}`);
      assert.deepEqual([project.body.image_count, project.body.annotation_count, project.body.annotated_image_count], [1, 0, 0]);
      assert.equal((await alice.get(`/api/images/${elsewhere}`)).status, 200);
      assert.equal((await bob.get(`/api/images/${bobs}`)).status, 200);

      const unscoped = await alice.post('/api/images/bulk-delete', { ids: [mine[2], elsewhere, bobs] });
      assert.deepEqual(unscoped.body, { deleted: 2, deleted_annotations: 0, not_found: [bobs] });
      assert.equal((await alice.get(`/api/projects/${otherProjectId}`)).body.image_count, 0);
      assert.equal((await bob.get(`/api/projects/${bobProjectId}`)).body.image_count, 1);
      const files = await blobFiles(t);
      assert.ok(!files.some((f) => f.startsWith(`projects/${projectId}/`) || f.startsWith(`projects/${otherProjectId}/`)));
      assert.ok(files.some((f) => f.startsWith(`projects/${bobProjectId}/`)));

      for (const body of [{ ids: [] }, { ids: ['x'] }, {}, { ids: [1], project_id: 'p' }, { ids: [0] }]) {
        const res = await alice.post('/api/images/bulk-delete', body);
        assert.equal(res.status, 422, JSON.stringify(body));
      }
      assert.equal((await t.client().post('/api/images/bulk-delete', { ids: [bobs] })).status, 401);
      assert.equal((await bob.get(`/api/images/${bobs}`)).status, 200);
    });

    it('removes the blob folder with the project', async () => {
      const projectId = await newProject(alice);
      await upload(alice, projectId, [{ filename: 'a.gif', data: await solid('gif') }]);
      assert.ok(existsSync(join(t.dataDir, 'blobs', 'projects', String(projectId))));
      assert.equal((await alice.delete(`/api/projects/${projectId}`)).status, 204);
      assert.ok(!existsSync(join(t.dataDir, 'blobs', 'projects', String(projectId))));
    });
  });
});
