import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { BadRequestError, PayloadTooLargeError, ValidationError } from './errors.js';
import { isNameField, textProblem } from './input-guard.js';

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

/** Files, fields (non-file parts) and parts per body: more is a 413. */
interface PartLimits {
  readonly files: number;
  readonly fields: number;
  readonly parts: number;
}

export interface MultipartOptions {
  /** Only the file parts of this field are read; every other part is skipped. */
  readonly field: string;
  /** Bytes per file, and the counts per body. */
  readonly limits: PartLimits & { readonly fileSize: number };
}

/** A file part of a multipart/form-data body, its bytes streamed as the body arrives. */
export interface StreamedFile {
  readonly name: string;
  /** The client's file name reduced to its base name; '' when the part has none. */
  readonly filename: string;
  /** Ends with the part; destroyed with the error that fails the body. */
  readonly stream: Readable;
}

export interface StreamOptions {
  /** Bytes per file and per field, and the counts per body: more is a 413. */
  readonly limits: PartLimits & { readonly fileSize: number; readonly fieldSize: number };
  /** The message of the 413 for a file over `limits.fileSize`. */
  readonly fileTooLarge: string;
}

/** The body is not well-formed multipart/form-data. */
export class MalformedMultipartError extends Error {}

/** A part's name and, for a file part, its file name. */
interface PartHead {
  readonly name: string;
  /** Undefined for a field. */
  readonly filename: string | undefined;
}

/** Where a part's bytes go: `write` returns a promise when the parse must wait before writing more. */
interface PartSink<T> {
  write(bytes: Buffer): Promise<unknown> | void;
  /** What the part is, yielded by the parse when it is not undefined. */
  end(): T | undefined;
}

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
 * arrives. A wanted file is hashed chunk by chunk and copied once, from views of the chunks, when it is complete.
 */
export function multipartFiles(body: AsyncIterable<Buffer>, contentType: string | undefined, { field, limits }: MultipartOptions): AsyncGenerator<MultipartFile> {
  return parseParts(body, contentType, limits, (part) =>
    part.filename !== undefined && part.name === field ? new FilePart(baseName(part.filename), limits.fileSize) : undefined);
}

/**
 * Reads a multipart/form-data body to its end: returns the text fields by name (the last of each) and hands each file
 * part to `onFile` as soon as its headers arrive. The parse fills the file's stream only as fast as it is read, and
 * moves on to the next part once `onFile` has settled; what `onFile` leaves unread is dropped. `onFile`'s own error
 * fails the read as it is; a malformed body is a 400, a limit a 413 (then the stream is destroyed with that error).
 */
export async function readMultipart(
  body: AsyncIterable<Buffer>,
  contentType: string | undefined,
  { limits, fileTooLarge }: StreamOptions,
  onFile: (file: StreamedFile) => Promise<void>,
): Promise<Record<string, string>> {
  const fields: Record<string, string> = Object.create(null);
  let file: FileStream | undefined;
  const open = (part: PartHead) => part.filename === undefined
    ? new FieldValue(part.name, limits.fieldSize, fields)
    : (file = new FileStream({ name: part.name, filename: baseName(part.filename) }, limits.fileSize, fileTooLarge, onFile));
  try {
    for await (const handled of parseParts(body, contentType, limits, open)) await handled;
    return fields;
  } catch (err) {
    if (file?.failed) throw err;
    const error = multipartError(err);
    file?.stream.destroy(error);
    // The reader removes what it wrote before the error reply goes out.
    await file?.handled.catch(() => {});
    throw error;
  }
}

/** A multipart parse's error as the reply gives it: the limits' errors carry a status, the others mean a malformed body. */
export function multipartError(err: unknown): Error {
  if ((err as { statusCode?: number }).statusCode) return err as Error;
  return new BadRequestError(`Malformed multipart body: ${(err as Error).message}`);
}

/** Whether a Content-Type is multipart/form-data (parameters aside), as Fastify matches its body parsers. */
export function isMultipartFormData(contentType: string | undefined): boolean {
  return headerParameters(contentType ?? '').type === 'multipart/form-data';
}

/**
 * The parts of a multipart/form-data body, in order: `open` gives each part's sink (none: skipped), and what a sink
 * ends with is yielded when the part's closing delimiter arrives. Delimiters are found with `Buffer.indexOf` in the
 * chunks as they come, also when split across chunks; sinks get views of the chunks.
 */
async function* parseParts<T>(
  body: AsyncIterable<Buffer>,
  contentType: string | undefined,
  limits: PartLimits,
  open: (part: PartHead) => PartSink<T> | undefined,
): AsyncGenerator<T> {
  const boundary = headerParameters(contentType ?? '').params.get('boundary');
  if (!boundary || !BOUNDARY.test(boundary)) throw new MalformedMultipartError('the Content-Type has no valid boundary');
  const dashBoundary = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const counts = { parts: 0, files: 0, fields: 0 };
  let state: 'start' | 'preamble' | 'headers' | 'body' | 'done' = 'start';
  let sink: PartSink<T> | undefined;
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
          const wait = keep > pos ? sink?.write(buf.subarray(pos, keep)) : undefined;
          keepFrom(keep);
          if (wait) await wait;
          break;
        }
        if (sink) {
          const wait = end > pos ? sink.write(buf.subarray(pos, end)) : undefined;
          if (wait) await wait;
          const part = sink.end();
          sink = undefined;
          if (part !== undefined) yield part;
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
        const part = readPartHead(buf.toString('utf8', pos, end), limits, counts);
        sink = part && open(part);
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

/** Reads a part's header block (after the delimiter, up to the blank line), counting it: undefined when not form data. */
function readPartHead(block: string, limits: PartLimits, counts: { parts: number; files: number; fields: number }): PartHead | undefined {
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
  const name = params.get('name') ?? '';
  const filename = extendedValue(params.get('filename*')) ?? params.get('filename');
  // The rule of JSON bodies (input-guard): a part's name is a key, its file name a name.
  const nameProblem = textProblem(name, false);
  if (nameProblem) throw ValidationError.at(['body'], `A part name ${nameProblem}`, 'string_pattern_mismatch');
  const filenameProblem = filename === undefined ? null : textProblem(filename, true);
  if (filenameProblem) throw ValidationError.at(['body', name, 'filename'], `File name ${filenameProblem}`, 'string_pattern_mismatch');
  // As busboy decides: a part is a file when it has a file name or is declared as raw bytes.
  if (filename !== undefined || headerParameters(contentType ?? '').type === 'application/octet-stream') {
    if (++counts.files > limits.files) throw new PayloadTooLargeError('reach files limit');
    return { name, filename: filename ?? '' };
  }
  if (++counts.fields > limits.fields) throw new PayloadTooLargeError('reach fields limit');
  return { name, filename: undefined };
}

/** The bytes of a wanted file part as views of the chunks they arrived in, hashed as they come. */
class FilePart implements PartSink<MultipartFile> {
  private readonly hash = createHash('sha256');
  private readonly views: Buffer[] = [];
  private length = 0;

  constructor(private readonly filename: string, private readonly maxBytes: number) {}

  /** Past the size limit, bytes are only counted. */
  write(view: Buffer): void {
    this.length += view.length;
    if (this.length > this.maxBytes) {
      this.views.length = 0;
    } else {
      this.hash.update(view);
      this.views.push(view);
    }
  }

  end(): MultipartFile {
    const { filename } = this;
    if (this.length > this.maxBytes) return { filename, bytes: EMPTY, sha256: EMPTY_SHA256, truncated: true };
    return { filename, bytes: Buffer.concat(this.views, this.length), sha256: this.hash.digest('hex'), truncated: false };
  }
}

/** A text field's value, stored in `fields` when the part ends; one over `maxBytes` is a 413. */
class FieldValue implements PartSink<never> {
  private readonly views: Buffer[] = [];
  private length = 0;

  constructor(private readonly name: string, private readonly maxBytes: number, private readonly fields: Record<string, string>) {}

  write(view: Buffer): void {
    this.length += view.length;
    if (this.length > this.maxBytes) throw new PayloadTooLargeError(`The field "${this.name}" is larger than ${this.maxBytes} bytes`);
    this.views.push(view);
  }

  end(): undefined {
    const value = Buffer.concat(this.views, this.length).toString('utf8');
    const problem = textProblem(value, isNameField(this.name));
    if (problem) throw ValidationError.at(['body', this.name], `String ${problem}`, 'string_pattern_mismatch');
    this.fields[this.name] = value;
    return undefined;
  }
}

/**
 * A file part's bytes pushed into a stream as they arrive: the parse waits while the stream's buffer is full, so a
 * file of any size passes through a bounded buffer. The part's end yields the settling of `onFile`.
 */
class FileStream implements PartSink<Promise<void>> {
  readonly stream = new Readable({ read: () => this.wake() });
  readonly handled: Promise<void>;
  /** `onFile` failed: its error is the read's. */
  failed = false;
  private length = 0;
  private resume: (() => void) | undefined;

  constructor(head: Omit<StreamedFile, 'stream'>, private readonly maxBytes: number, private readonly tooLarge: string, onFile: (file: StreamedFile) => Promise<void>) {
    this.stream.on('close', () => this.wake());
    // The reader sees the stream's errors through its own listeners; this one keeps an unread stream's from crashing.
    this.stream.on('error', () => {});
    this.handled = onFile({ ...head, stream: this.stream });
    this.handled.then(() => this.stream.resume(), () => {
      this.failed = true;
      this.stream.destroy();
    });
  }

  write(view: Buffer): Promise<unknown> | void {
    this.length += view.length;
    if (this.length > this.maxBytes) throw new PayloadTooLargeError(this.tooLarge);
    // Destroyed by the reader: its failure ends the parse, else the rest of the part is dropped.
    if (this.stream.destroyed) return this.handled;
    if (!this.stream.push(view)) return new Promise<void>((resolve) => (this.resume = resolve));
  }

  end(): Promise<void> {
    this.stream.push(null);
    return this.handled;
  }

  private wake(): void {
    this.resume?.();
    this.resume = undefined;
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
