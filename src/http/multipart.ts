import { createHash } from 'node:crypto';
import { PayloadTooLargeError } from './errors.js';

/** A file part of a multipart/form-data body, read whole and hashed as it arrived. */
export interface MultipartFile {
  /** The client's file name reduced to its base name; '' when the part has none. */
  readonly filename: string;
  /** Empty when truncated. */
  readonly bytes: Buffer;
  /** SHA-256 of `bytes`, hex. */
  readonly sha256: string;
  /** The file was larger than `limits.fileSize`; the rest of it was skipped unread. */
  readonly truncated: boolean;
}

export interface MultipartOptions {
  /** Only the file parts of this field are read; every other part is skipped. */
  readonly field: string;
  /** Bytes per file; files, fields (non-file parts) and parts per body: more is a 413. */
  readonly limits: { readonly fileSize: number; readonly files: number; readonly fields: number; readonly parts: number };
}

/** The body is not well-formed multipart/form-data. */
export class MalformedMultipartError extends Error {}

const MAX_HEADER_BYTES = 16 * 1024;
const CR = 0x0d;
const DASH = 0x2d;
const HEADER_END = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);
const EMPTY_SHA256 = createHash('sha256').digest('hex');
// RFC 2046: 1 to 70 characters, the last one not a space.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
const PARAMETER = /;\s*([^\s;=]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"[^;]*|([^;]*))/y;

/**
 * The file parts of `field` in a multipart/form-data body, in order, each yielded as soon as its closing delimiter
 * arrives. Delimiters are found with `Buffer.indexOf` in the chunks as they come, also when split across chunks;
 * a wanted file is hashed chunk by chunk and copied once, from views of the chunks, when it is complete.
 */
export async function* multipartFiles(body: AsyncIterable<Buffer>, contentType: string | undefined, options: MultipartOptions): AsyncGenerator<MultipartFile> {
  const boundary = headerParameters(contentType ?? '').params.get('boundary');
  if (!boundary || !BOUNDARY.test(boundary)) throw new MalformedMultipartError('the Content-Type has no valid boundary');
  const dashBoundary = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const counts = { parts: 0, files: 0, fields: 0 };
  let state: 'start' | 'preamble' | 'headers' | 'body' | 'done' = 'start';
  let file: FilePart | undefined;
  let rest: Buffer | undefined;
  let received = 0;

  for await (const chunk of body) {
    received += chunk.length;
    // The epilogue is read to the end, unparsed, so the connection can serve the next request.
    if (state === 'done') continue;
    const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
    const keepFrom = (at: number) => (rest = at < buf.length ? buf.subarray(at) : undefined);
    let pos = 0;
    for (;;) {
      if (state === 'body') {
        const end = buf.indexOf(delimiter, pos);
        if (end === -1) {
          const keep = buf.length - partialDelimiterLength(buf, pos, delimiter);
          file?.add(buf.subarray(pos, keep));
          keepFrom(keep);
          break;
        }
        if (file) {
          file.add(buf.subarray(pos, end));
          yield file.done();
          file = undefined;
        }
        pos = end + delimiter.length;
        state = 'headers';
      } else if (state === 'headers') {
        if (buf.length - pos < 2) {
          keepFrom(pos);
          break;
        }
        if (buf[pos] === DASH && buf[pos + 1] === DASH) {
          state = 'done';
          break;
        }
        const end = buf.indexOf(HEADER_END, pos);
        if ((end === -1 ? buf.length : end) - pos > MAX_HEADER_BYTES) throw new MalformedMultipartError(`part headers are larger than ${MAX_HEADER_BYTES / 1024} KiB`);
        // A delimiter before the blank line ending the headers, or straight after it, leaves the part unterminated.
        const scanned = end === -1 ? buf.length : Math.min(buf.length, end + 2 + delimiter.length);
        if (buf.subarray(pos, scanned).includes(delimiter)) throw new MalformedMultipartError('part headers are not terminated by a blank line');
        if (end === -1 || scanned < end + 2 + delimiter.length) {
          keepFrom(pos);
          break;
        }
        file = openPart(buf.toString('utf8', pos, end), options, counts);
        pos = end + HEADER_END.length;
        state = 'body';
      } else if (state === 'preamble') {
        const at = buf.indexOf(delimiter, pos);
        if (at === -1) {
          keepFrom(buf.length - partialDelimiterLength(buf, pos, delimiter));
          break;
        }
        pos = at + delimiter.length;
        state = 'headers';
      } else {
        // The start: the first delimiter may open the body without the CRLF that comes before the others.
        if (buf.length < dashBoundary.length) {
          keepFrom(0);
          break;
        }
        const opens = buf.subarray(0, dashBoundary.length).equals(dashBoundary);
        pos = opens ? dashBoundary.length : 0;
        state = opens ? 'headers' : 'preamble';
      }
    }
  }
  // An empty body is a form without parts, as for the multipart plugin.
  if (state === 'done' || received === 0) return;
  throw new MalformedMultipartError(state === 'start' || state === 'preamble' ? 'no boundary delimiter in the body' : 'the body ends before the closing boundary delimiter');
}

/** A header value's leading token (lowercased) and its `; key=value` parameters by lowercased key, the first of each. */
function headerParameters(value: string): { type: string; params: Map<string, string> } {
  const semicolon = value.indexOf(';');
  const params = new Map<string, string>();
  PARAMETER.lastIndex = semicolon === -1 ? value.length : semicolon;
  for (let match = PARAMETER.exec(value); match; match = PARAMETER.exec(value)) {
    const key = match[1].toLowerCase();
    // Like busboy, a backslash only escapes a quote or a backslash: browsers send Windows paths unescaped.
    if (!params.has(key)) params.set(key, match[2] !== undefined ? match[2].replace(/\\([\\"])/g, '$1') : match[3].trim());
  }
  return { type: (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase(), params };
}

/** Reads a part's header block (after the delimiter, up to the blank line): the reader of a wanted file, if it is one. */
function openPart(block: string, { field, limits }: MultipartOptions, counts: { parts: number; files: number; fields: number }): FilePart | undefined {
  if (++counts.parts > limits.parts) throw new PayloadTooLargeError('reach parts limit');
  // Folded lines are joined; the first line, after the delimiter, may hold only transport padding.
  const [padding, ...lines] = block.replace(/\r\n(?=[ \t])/g, '').split('\r\n');
  if (!/^[ \t]*$/.test(padding)) throw new MalformedMultipartError('unexpected characters after a boundary delimiter');
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 1 || /[\r\n]/.test(line)) throw new MalformedMultipartError(`malformed part header: ${JSON.stringify(line.slice(0, 100))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    if (name === 'content-disposition') disposition ??= line.slice(colon + 1);
    else if (name === 'content-type') contentType ??= line.slice(colon + 1);
  }
  const { type, params } = headerParameters(disposition ?? '');
  if (type !== 'form-data') return undefined;
  const filename = extendedValue(params.get('filename*')) ?? params.get('filename');
  // As busboy decides: a part is a file when it has a file name or is declared as raw bytes.
  if (filename !== undefined || headerParameters(contentType ?? '').type === 'application/octet-stream') {
    if (++counts.files > limits.files) throw new PayloadTooLargeError('reach files limit');
    return params.get('name') === field ? new FilePart(baseName(filename ?? ''), limits.fileSize) : undefined;
  }
  if (++counts.fields > limits.fields) throw new PayloadTooLargeError('reach fields limit');
  return undefined;
}

/** The bytes of a wanted file part as views of the chunks they arrived in, hashed as they come. */
class FilePart {
  private readonly hash = createHash('sha256');
  private readonly views: Buffer[] = [];
  private length = 0;

  constructor(private readonly filename: string, private readonly maxBytes: number) {}

  /** Past the size limit, bytes are only counted. */
  add(view: Buffer): void {
    this.length += view.length;
    if (this.length > this.maxBytes) {
      this.views.length = 0;
    } else {
      this.hash.update(view);
      this.views.push(view);
    }
  }

  done(): MultipartFile {
    const { filename } = this;
    if (this.length > this.maxBytes) return { filename, bytes: EMPTY, sha256: EMPTY_SHA256, truncated: true };
    return { filename, bytes: Buffer.concat(this.views, this.length), sha256: this.hash.digest('hex'), truncated: false };
  }
}

/** How many bytes at the end of `buf` (from `from` on) begin a delimiter that the next chunk may complete. */
function partialDelimiterLength(buf: Buffer, from: number, delimiter: Buffer): number {
  for (let at = buf.indexOf(CR, Math.max(from, buf.length - delimiter.length + 1)); at !== -1; at = buf.indexOf(CR, at + 1)) {
    if (buf.compare(delimiter, 0, buf.length - at, at) === 0) return buf.length - at;
  }
  return 0;
}

/** An RFC 5987 value (`UTF-8''caf%C3%A9.jpg`) decoded; undefined when absent or undecodable. */
function extendedValue(value: string | undefined): string | undefined {
  const match = value === undefined ? null : /^([^']*)'[^']*'(.*)$/.exec(value);
  if (!match) return undefined;
  const bytes = Buffer.from(match[2].replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  try {
    return new TextDecoder(match[1] || 'utf-8').decode(bytes);
  } catch {
    return undefined;
  }
}

/** The last segment of a path, as busboy reports file names: some clients send the whole path. */
function baseName(path: string): string {
  const base = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
  return base === '.' || base === '..' ? '' : base;
}
