import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { BadRequestError, PayloadTooLargeError } from '../../src/http/errors.js';
import {
  isMultipartFormData, MalformedMultipartError, multipartFiles, readMultipart, type MultipartOptions, type StreamedFile, type StreamOptions,
} from '../../src/http/multipart.js';
import { Random } from '../../src/lib/random.js';

const OPTIONS: MultipartOptions = { field: 'files', limits: { fileSize: 1024, files: 1000, fields: 50, parts: 1100 } };
const sha256 = (latin1: string) => createHash('sha256').update(Buffer.from(latin1, 'latin1')).digest('hex');

/** A body as the standard `FormData` encoder (browsers, undici) writes it. */
async function encode(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { body: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type')! };
}

/** The body in chunks cut at the given offsets. */
async function* chunks(body: Buffer, cuts: number[] = []): AsyncGenerator<Buffer> {
  let start = 0;
  for (const cut of [...cuts, body.length]) {
    yield body.subarray(start, cut);
    start = cut;
  }
}

/** The yielded files with their bytes as text. */
async function parse(source: Buffer | AsyncIterable<Buffer>, contentType = 'multipart/form-data; boundary=XyZ', options = OPTIONS) {
  const files = [];
  for await (const file of multipartFiles(Buffer.isBuffer(source) ? chunks(source) : source, contentType, options)) {
    files.push({ ...file, bytes: file.bytes.toString('latin1') });
  }
  return files;
}

/** A body with boundary `XyZ` from raw parts (each its headers, a blank line, its content). */
const raw = (...parts: string[]) => Buffer.from(parts.map((part) => `--XyZ\r\n${part}\r\n`).join('') + '--XyZ--\r\n', 'latin1');
const filePart = (content: string, disposition = 'form-data; name="files"; filename="a.jpg"') => `Content-Disposition: ${disposition}\r\n\r\n${content}`;
const file = (filename: string, content: string, truncated = false) =>
  ({ filename, bytes: truncated ? '' : content, sha256: sha256(truncated ? '' : content), truncated });

describe('multipartFiles', () => {
  it('yields the file parts of the field from a FormData body, in order, with their bytes and hashes', async () => {
    const form = new FormData();
    form.append('note', 'a text field');
    form.append('files', new Blob([Buffer.from([0, 1, 2, 255])]), 'first.jpg');
    form.append('other', new Blob(['another field']), 'other.jpg');
    form.append('files', new Blob(['second file']), 'second.png');
    const { body, contentType } = await encode(form);
    assert.deepEqual(await parse(body, contentType), [file('first.jpg', '\x00\x01\x02\xff'), file('second.png', 'second file')]);
  });

  it('finds delimiters split across chunks at any position, also after near-matches in the data', async () => {
    // Data that begins a delimiter and breaks off, at the end of a file too: the boundary is known once encoded, so the
    // body is encoded again with that data and given the first boundary back.
    const { contentType } = await encode(new FormData());
    const boundary = contentType.split('boundary=')[1];
    const tricky = `\r\r\n-\r\n--${boundary.slice(0, -1)}x\r\n--`;
    const form = new FormData();
    form.append('files', new Blob([tricky]), 'a.jpg');
    form.append('note', 'text');
    form.append('files', new Blob(['']), 'empty.jpg');
    form.append('files', new Blob([`b${tricky}\r`]), 'b.jpg');
    const encoded = await encode(form);
    const body = Buffer.from(encoded.body.toString('latin1').replaceAll(encoded.contentType.split('boundary=')[1], boundary), 'latin1');
    const expected = [file('a.jpg', tricky), file('empty.jpg', ''), file('b.jpg', `b${tricky}\r`)];
    assert.deepEqual(await parse(body, contentType), expected);
    for (let cut = 0; cut <= body.length; cut++) assert.deepEqual(await parse(chunks(body, [cut]), contentType), expected, `cut at ${cut}`);
    const everyByte = Array.from({ length: body.length }, (_, i) => i);
    assert.deepEqual(await parse(chunks(body, everyByte), contentType), expected);
    const random = new Random(7);
    for (let round = 0; round < 200; round++) {
      const cuts = Array.from({ length: random.int(2, 6) }, () => random.int(0, body.length)).sort((a, b) => a - b);
      assert.deepEqual(await parse(chunks(body, cuts), contentType), expected, `cuts at ${cuts}`);
    }
  });

  it('yields each file as soon as its closing delimiter arrives', async () => {
    let pulled = 0;
    async function* slowly() {
      for (const piece of [`--XyZ\r\n${filePart('one')}`, '\r\n--XyZ', `\r\n${filePart('two')}`, '\r\n--XyZ--']) {
        pulled++;
        yield Buffer.from(piece);
      }
    }
    const files = multipartFiles(slowly(), 'multipart/form-data; boundary=XyZ', OPTIONS);
    assert.equal((await files.next()).value?.bytes.toString(), 'one');
    assert.equal(pulled, 2);
    assert.equal((await files.next()).value?.bytes.toString(), 'two');
    assert.equal((await files.next()).done, true);
  });

  it('ignores the preamble and epilogue, and allows transport padding after delimiters', async () => {
    const body = Buffer.from(`preamble\r\n--XyZ \t\r\n${filePart('one')}\r\n--XyZ\t\r\n${filePart('two')}\r\n--XyZ-- \r\nepilogue\r\n--XyZ\r\nmore`);
    assert.deepEqual(await parse(body), [file('a.jpg', 'one'), file('a.jpg', 'two')]);
    assert.deepEqual(await parse(Buffer.from(`--XyZ\r\n${filePart('no CRLF at the end')}\r\n--XyZ--`)), [file('a.jpg', 'no CRLF at the end')]);
  });

  it('takes the boundary quoted or not, among other parameters', async () => {
    const body = Buffer.from(`--a b:c\r\n${filePart('x')}\r\n--a b:c--`);
    assert.deepEqual(await parse(body, 'Multipart/Form-Data; charset=utf-8; BOUNDARY="a b:c"'), [file('a.jpg', 'x')]);
    assert.deepEqual(await parse(raw(filePart('y')), 'multipart/form-data;boundary=XyZ ; charset=utf-8'), [file('a.jpg', 'y')]);
  });

  it('reads file names as busboy does (quoted with its escapes or not, raw UTF-8, base name only), filename* first', async () => {
    const names = [
      'form-data; name="files"; filename="a\\"b\\\\c\\d.jpg"',
      'form-data; name=files; filename=plain.jpg',
      `form-data; name="files"; filename="caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac.jpg"`,
      `form-data; name="files"; filename="fallback.jpg"; filename*=UTF-8''%C3%A9t%C3%A9.jpg`,
      `form-data; name="files"; filename*=iso-8859-1''%E9t%E9.jpg`,
      'form-data; name="files"; filename="C:\\\\photos\\\\dog.jpg"',
      'form-data; name="files"; filename="semi;colon.jpg" ; size=3',
      'form-data; name="files"; filename="../.."',
      'form-data; name="files"; filename=""',
    ];
    const files = await parse(raw(...names.map((disposition) => filePart('x', disposition))));
    assert.deepEqual(files.map((f) => f.filename), ['d.jpg', 'plain.jpg', 'café 日本.jpg', 'été.jpg', 'été.jpg', 'dog.jpg', 'semi;colon.jpg', '', '']);
  });

  it('reads header names and the disposition type in any case, and folded header lines', async () => {
    const body = raw(
      'content-disposition: FORM-DATA; NAME="files"; FileName="upper.jpg"\r\nCONTENT-TYPE: image/jpeg\r\n\r\none',
      'Content-Disposition: form-data; name="files";\r\n\tfilename="folded.jpg"\r\n\r\ntwo',
    );
    assert.deepEqual(await parse(body), [file('upper.jpg', 'one'), file('folded.jpg', 'two')]);
  });

  it('skips fields, parts without a form-data disposition and files of other fields; a raw-bytes part without a file name is a file', async () => {
    const body = raw(
      filePart('a text field', 'form-data; name="files"'),
      filePart('another field', 'form-data; name="other"; filename="other.jpg"'),
      filePart('not form data', 'attachment; name="files"; filename="attached.jpg"'),
      'Content-Type: image/jpeg\r\n\r\nno disposition',
      'Content-Disposition: form-data; name="files"\r\nContent-Type: Application/Octet-Stream; x=y\r\n\r\nunnamed',
      '\r\nno headers at all',
    );
    assert.deepEqual(await parse(body), [file('', 'unnamed')]);
  });

  it('reports a file over the size limit as truncated and empty, and reads the next one', async () => {
    const options = { ...OPTIONS, limits: { ...OPTIONS.limits, fileSize: 10 } };
    const body = raw(filePart('0123456789'), filePart('0123456789A'), filePart('0123456789'.repeat(100)), filePart('after'));
    const expected = [file('a.jpg', '0123456789'), file('a.jpg', '', true), file('a.jpg', '', true), file('a.jpg', 'after')];
    assert.deepEqual(await parse(body, undefined, options), expected);
    const everyByte = Array.from({ length: body.length }, (_, i) => i);
    assert.deepEqual(await parse(chunks(body, everyByte), undefined, options), expected);
  });

  it('refuses more files, fields or parts than the limits with 413, after yielding the files before', async () => {
    const limits = { fileSize: 100, files: 2, fields: 1, parts: 4 };
    const options = { ...OPTIONS, limits };
    const tooMany = async (body: Buffer, message: string) => {
      const yielded: string[] = [];
      const reading = (async () => {
        for await (const f of multipartFiles(chunks(body), 'multipart/form-data; boundary=XyZ', options)) yielded.push(f.bytes.toString());
      })();
      await assert.rejects(reading, (err) => err instanceof PayloadTooLargeError && err.statusCode === 413 && err.message === message);
      return yielded;
    };
    const other = filePart('x', 'form-data; name="other"; filename="o.jpg"');
    assert.deepEqual(await parse(raw(filePart('1'), other), undefined, options), [file('a.jpg', '1')]);
    assert.deepEqual(await tooMany(raw(filePart('1'), other, filePart('3')), 'reach files limit'), ['1']);
    const field = filePart('text', 'form-data; name="note"');
    assert.deepEqual(await tooMany(raw(filePart('1'), field, field), 'reach fields limit'), ['1']);
    const attachment = filePart('x', 'attachment');
    assert.deepEqual(await tooMany(raw(filePart('1'), attachment, attachment, attachment, attachment), 'reach parts limit'), ['1']);
  });

  it('takes an empty body as a form without parts', async () => {
    assert.deepEqual(await parse(Buffer.alloc(0)), []);
  });

  describe('refuses malformed bodies', () => {
    const malformed = async (body: Buffer, message: RegExp, contentType?: string) => {
      await assert.rejects(parse(body, contentType), (err) => err instanceof MalformedMultipartError && message.test(err.message));
      const everyByte = Array.from({ length: body.length }, (_, i) => i);
      await assert.rejects(parse(chunks(body, everyByte), contentType), (err) => err instanceof MalformedMultipartError && message.test(err.message));
    };

    it('without a valid boundary', async () => {
      const body = raw(filePart('x'));
      await malformed(body, /no valid boundary/, 'multipart/form-data');
      await malformed(body, /no valid boundary/, 'multipart/form-data; boundary=""');
      await malformed(body, /no valid boundary/, `multipart/form-data; boundary=${'b'.repeat(71)}`);
      await malformed(body, /no valid boundary/, 'multipart/form-data; boundary="ends with a space "');
    });

    it('without any delimiter', async () => {
      await malformed(Buffer.from('garbage'), /no boundary delimiter/);
      // A boundary not at the start nor after a line break is no delimiter.
      await malformed(Buffer.from(`garbage--XyZ\r\n${filePart('x')}`), /no boundary delimiter/);
    });

    it('ending before the close delimiter: in a part, in its headers or after a delimiter', async () => {
      const whole = raw(filePart('x'));
      await malformed(whole.subarray(0, whole.indexOf('--XyZ--')), /ends before the closing boundary delimiter/);
      await malformed(whole.subarray(0, whole.indexOf('x\r\n')), /ends before the closing boundary delimiter/);
      await malformed(whole.subarray(0, whole.indexOf('\r\n\r\n')), /ends before the closing boundary delimiter/);
      await malformed(Buffer.from('--XyZ'), /ends before the closing boundary delimiter/);
      await malformed(Buffer.from(`--XyZ\r\n${filePart('x')}\r\n--XyZ-\r\n`), /ends before the closing boundary delimiter/);
    });

    it('with part headers that never end', async () => {
      await malformed(Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="files"; filename="a.jpg"\r\n--XyZ--'), /not terminated/);
      await malformed(Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="files"; filename="a.jpg"\r\n\r\n--XyZ--'), /not terminated/);
      await malformed(Buffer.from(`--XyZ\r\nContent-Disposition: form-data; name="files"\r\nX-Long: ${'x'.repeat(16 * 1024)}\r\n\r\nx\r\n--XyZ--`), /larger than 16 KiB/);
      await malformed(Buffer.from(`--XyZ\r\nX-Endless: ${'x'.repeat(40 * 1024)}`), /larger than 16 KiB/);
    });

    it('with bytes after a delimiter or header lines that are not headers', async () => {
      await malformed(Buffer.from(`--XyZjunk\r\n${filePart('x')}\r\n--XyZ--`), /unexpected characters after a boundary delimiter/);
      await malformed(Buffer.from(`--XyZ\r\nnot a header\r\n\r\nx\r\n--XyZ--`), /malformed part header/);
      await malformed(Buffer.from(`--XyZ\r\n${filePart('x', 'form-data; name="files"; filename="a\nb.jpg"')}\r\n--XyZ--`), /malformed part header/);
    });
  });

  it('rejects when the stream fails or the client disconnects mid-body', async () => {
    const failing = Readable.from((async function* () {
      yield Buffer.from(`--XyZ\r\n${filePart('x')}`);
      throw new Error('connection reset');
    })());
    await assert.rejects(parse(failing), /connection reset/);

    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const parsed = new Promise<unknown>((resolve) => {
        server.once('request', (req) => {
          parse(req.iterator({ destroyOnReturn: false }), req.headers['content-type']).then(resolve, resolve);
        });
      });
      const { port } = server.address() as AddressInfo;
      const client = httpRequest({ port, method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XyZ', 'content-length': '100000' } });
      client.on('error', () => {});
      client.write(`--XyZ\r\n${filePart('the start of a file')}`, () => setTimeout(() => client.destroy(), 20));
      const outcome = await parsed;
      assert.ok(outcome instanceof Error, 'the parse rejects');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('readMultipart', () => {
  const STREAM: StreamOptions = { limits: { fileSize: 1024, fieldSize: 16, files: 3, fields: 3, parts: 10 }, fileTooLarge: 'the file is too large' };
  const CONTENT_TYPE = 'multipart/form-data; boundary=XyZ';

  /** The fields and the files (read whole, as text) of a body; files of the field `skip` are left unread. */
  async function read(source: Buffer | AsyncIterable<Buffer>, options = STREAM) {
    const files: { name: string; filename: string; content: string }[] = [];
    const fields = await readMultipart(Buffer.isBuffer(source) ? chunks(source) : source, CONTENT_TYPE, options, async (file) => {
      if (file.name !== 'skip') files.push({ name: file.name, filename: file.filename, content: (await buffer(file.stream)).toString('latin1') });
    });
    return { fields: { ...fields }, files };
  }

  /** The body in 64 KiB chunks, counting the bytes the parse has pulled from it. */
  function counted(body: Buffer) {
    const count = { pulled: 0 };
    async function* pull() {
      for (let at = 0; at < body.length; at += 64 * 1024) {
        count.pulled = Math.min(at + 64 * 1024, body.length);
        yield body.subarray(at, at + 64 * 1024);
      }
    }
    return Object.assign(count, { chunks: pull() });
  }

  const field = (name: string, value: string) => filePart(value, `form-data; name="${name}"`);
  const fileOf = (name: string, filename: string, content: string) => filePart(content, `form-data; name="${name}"; filename="${filename}"`);

  it('returns the text fields (the last of each name) and streams each file part, skipping those left unread', async () => {
    const body = raw(field('name', 'first'), fileOf('skip', 'a.bin', 'never read'), fileOf('file', 'dir/w.onnx', 'weights'), field('name', 'caf\xc3\xa9'), field('task', ''));
    const expected = { fields: { name: 'café', task: '' }, files: [{ name: 'file', filename: 'w.onnx', content: 'weights' }] };
    assert.deepEqual(await read(body), expected);
    assert.deepEqual(await read(Buffer.alloc(0)), { fields: {}, files: [] });
  });

  it('finds delimiters split at every byte position', async () => {
    const body = raw(field('notes', 'n\r\n--Xy'), fileOf('file', 'a.bin', '\r\n--Xy\r\r\n-'), fileOf('skip', 'b.bin', 'skipped'), fileOf('file', 'c.bin', ''), field('format', 'coco'));
    const expected = await read(body);
    assert.deepEqual(expected, {
      fields: { notes: 'n\r\n--Xy', format: 'coco' },
      files: [{ name: 'file', filename: 'a.bin', content: '\r\n--Xy\r\r\n-' }, { name: 'file', filename: 'c.bin', content: '' }],
    });
    for (let cut = 0; cut <= body.length; cut++) assert.deepEqual(await read(chunks(body, [cut])), expected, `cut at ${cut}`);
    assert.deepEqual(await read(chunks(body, Array.from({ length: body.length }, (_, i) => i))), expected);
  });

  it('streams a large file with backpressure: a slow reader holds the parse back, nothing is buffered whole', async () => {
    const content = Buffer.alloc(8 * 1024 * 1024, 'x');
    const body = counted(Buffer.concat([Buffer.from(`--XyZ\r\n${fileOf('file', 'big.bin', '')}`), content, Buffer.from('\r\n--XyZ--\r\n')]));
    const options = { ...STREAM, limits: { ...STREAM.limits, fileSize: content.length } };
    let written = 0;
    let mostAhead = 0;
    const hash = createHash('sha256');
    const slowSink = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        written += chunk.length;
        mostAhead = Math.max(mostAhead, body.pulled - written);
        setImmediate(done);
      },
    });
    await readMultipart(body.chunks, CONTENT_TYPE, options, (file) => pipeline(file.stream, slowSink));
    assert.equal(written, content.length);
    assert.equal(hash.digest('hex'), createHash('sha256').update(content).digest('hex'));
    assert.ok(mostAhead < 256 * 1024, `the parse ran ${mostAhead} bytes ahead of the reader`);
  });

  it('fails with 413 as soon as a file passes the size limit, destroying its stream with that error', async () => {
    const body = counted(raw(fileOf('file', 'big.bin', 'y'.repeat(4 * 1024 * 1024))));
    let readerError: unknown;
    const reading = readMultipart(body.chunks, CONTENT_TYPE, { ...STREAM, limits: { ...STREAM.limits, fileSize: 100_000 } }, async (file) => {
      await buffer(file.stream).catch((err: unknown) => (readerError = err));
    });
    await assert.rejects(reading, (err) => err instanceof PayloadTooLargeError && err.message === 'the file is too large');
    assert.ok(readerError instanceof PayloadTooLargeError);
    assert.ok(body.pulled <= 3 * 64 * 1024, `read ${body.pulled} bytes`);
  });

  it('refuses a field over the field size and more files, fields or parts than the limits with 413', async () => {
    const tooLarge = async (body: Buffer, message: RegExp) =>
      assert.rejects(read(body), (err) => err instanceof PayloadTooLargeError && message.test(err.message));
    await tooLarge(raw(field('name', 'x'.repeat(17))), /^The field "name" is larger than 16 bytes$/);
    await tooLarge(raw(...Array.from({ length: 4 }, () => fileOf('skip', 'a.bin', 'x'))), /^reach files limit$/);
    await tooLarge(raw(...Array.from({ length: 4 }, () => field('name', 'x'))), /^reach fields limit$/);
    await tooLarge(raw(...Array.from({ length: 11 }, () => filePart('x', 'attachment'))), /^reach parts limit$/);
    assert.deepEqual((await read(raw(field('name', 'x'.repeat(16))))).fields, { name: 'x'.repeat(16) });
  });

  it('refuses a malformed body with 400, destroying the stream of the file it cuts short', async () => {
    const malformed = async (body: Buffer | AsyncIterable<Buffer>, message: RegExp, contentType = CONTENT_TYPE) => {
      let readerError: unknown;
      const reading = readMultipart(Buffer.isBuffer(body) ? chunks(body) : body, contentType, STREAM, async (file) => {
        await buffer(file.stream).catch((err: unknown) => (readerError = err));
      });
      await assert.rejects(reading, (err) => err instanceof BadRequestError && err.statusCode === 400 && message.test(err.message));
      return readerError;
    };
    const whole = raw(fileOf('file', 'a.bin', 'content'));
    const cut = await malformed(whole.subarray(0, whole.indexOf('--XyZ--')), /^Malformed multipart body: the body ends before the closing boundary delimiter$/);
    assert.ok(cut instanceof BadRequestError);
    await malformed(whole, /no valid boundary/, 'multipart/form-data');
    await malformed(Buffer.from('garbage'), /no boundary delimiter/);
    await malformed(Buffer.from(`--XyZ\r\nnot a header\r\n\r\nx\r\n--XyZ--`), /malformed part header/);
    const reset = await malformed((async function* () {
      yield Buffer.from(`--XyZ\r\n${fileOf('file', 'a.bin', 'the start')}`);
      throw new Error('connection reset');
    })(), /^Malformed multipart body: connection reset$/);
    assert.ok(reset instanceof BadRequestError);
  });

  it("fails with the reader's own error, unchanged, and stops reading the body", async () => {
    const body = counted(raw(fileOf('file', 'big.bin', 'z'.repeat(4 * 1024 * 1024))));
    const diskFull = new Error('ENOSPC: no space left on device');
    const failingSink = new Writable({ write: (_chunk, _encoding, done) => done(diskFull) });
    await assert.rejects(readMultipart(body.chunks, CONTENT_TYPE, { ...STREAM, limits: { ...STREAM.limits, fileSize: 1e9 } }, (file: StreamedFile) =>
      pipeline(file.stream, failingSink)), (err) => err === diskFull);
    assert.ok(body.pulled <= 3 * 64 * 1024, `read ${body.pulled} bytes`);
  });

  it('tells multipart/form-data content types as Fastify matches them', () => {
    assert.equal(isMultipartFormData('multipart/form-data; boundary=x'), true);
    assert.equal(isMultipartFormData('Multipart/Form-Data'), true);
    assert.equal(isMultipartFormData('multipart/mixed; boundary=x'), false);
    assert.equal(isMultipartFormData('application/json'), false);
    assert.equal(isMultipartFormData(undefined), false);
  });
});
