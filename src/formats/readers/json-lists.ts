/**
 * The elements of some top-level lists of a JSON object (`{"images": [...], "annotations": [...]}`), fed chunk by
 * chunk: each chunk's complete elements are cut out of the bytes and handed to the engine's JSON.parse together, a
 * JavaScript tokenizer never builds them (a COCO file of 100k keypoint instances: ~10× faster than
 * @streamparser/json). Only well-formed JSON of that shape is handled here: anything else (a document that is not an
 * object, a listed name whose value is not a list, a syntax error) throws `NotLists`, and the caller reads the document
 * some other way. Other members are checked (JSON.parse) and dropped.
 */
export class NotLists extends Error {}

type Mode = 'start' | 'member' | 'key' | 'colon' | 'value' | 'other' | 'afterMember' | 'element' | 'inElement' | 'afterElement' | 'done';

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export class JsonLists<Name extends string> {
  private bytes: Buffer = Buffer.alloc(0);
  private pos = 0;
  private mode: Mode = 'start';
  /** Whether the object or list just opened has no member yet (`{}` and `[]` are fine, `[1,]` is not). */
  private first = true;
  /** The list being read, when the current member is one of `names`. */
  private list: Name | null = null;
  /** Where the value being scanned starts, and the scanner's state inside it. */
  private start = -1;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The complete elements not yet parsed: [from, to) in `bytes`. */
  private batchFrom = -1;
  private batchTo = -1;

  constructor(private readonly names: ReadonlySet<Name>) {}

  /** The elements completed by this chunk, in document order. Bytes after the document's end are ignored. */
  push(chunk: Buffer): { list: Name; value: unknown }[] {
    if (this.mode === 'done') return [];
    // What is kept of the bytes before: the value being scanned, from its start.
    const keep = this.start >= 0 ? this.start : this.pos;
    this.bytes = keep < this.bytes.length ? Buffer.concat([this.bytes.subarray(keep), chunk]) : chunk;
    this.pos -= keep;
    if (this.start >= 0) this.start = 0;
    const out: { list: Name; value: unknown }[] = [];
    this.run(out);
    this.flush(out);
    return out;
  }

  /** The input is over: it must have been a whole document. */
  end(): void {
    if (this.mode !== 'done') throw new NotLists('the document ends early');
  }

  private run(out: { list: Name; value: unknown }[]): void {
    const b = this.bytes;
    while (this.pos < b.length && this.mode !== 'done') {
      const mode = this.mode;
      if (mode === 'key' || mode === 'other' || mode === 'inElement') {
        if (!this.scan()) return;
        const text = () => b.toString('utf8', this.start, this.pos);
        if (mode === 'key') {
          const key = parse(text());
          this.list = this.names.has(key as Name) ? (key as Name) : null;
          this.mode = 'colon';
        } else if (mode === 'other') {
          parse(text());
          this.mode = 'afterMember';
        } else {
          if (this.batchFrom < 0) this.batchFrom = this.start;
          this.batchTo = this.pos;
          this.mode = 'afterElement';
        }
        this.start = -1;
        continue;
      }
      const c = b[this.pos];
      if (isSpace(c)) {
        this.pos++;
        continue;
      }
      if (mode === 'start') {
        if (c !== 0x7b) throw new NotLists('not an object');
        this.pos++;
        this.mode = 'member';
        this.first = true;
      } else if (mode === 'member') {
        if (c === 0x7d && this.first) {
          this.pos++;
          this.mode = 'done';
        } else if (c === 0x22) this.begin('key');
        else throw new NotLists('a name expected');
      } else if (mode === 'colon') {
        if (c !== 0x3a) throw new NotLists('":" expected');
        this.pos++;
        this.mode = 'value';
      } else if (mode === 'value') {
        if (this.list === null) this.begin('other');
        else if (c !== 0x5b) throw new NotLists('not a list');
        else {
          this.pos++;
          this.mode = 'element';
          this.first = true;
        }
      } else if (mode === 'afterMember') {
        this.pos++;
        if (c === 0x2c) {
          this.mode = 'member';
          this.first = false;
        } else if (c === 0x7d) this.mode = 'done';
        else throw new NotLists('"," or "}" expected');
      } else if (mode === 'element') {
        if (c === 0x5d && this.first) {
          this.pos++;
          this.mode = 'afterMember';
        } else if (c === 0x5d || c === 0x2c) throw new NotLists('a value expected');
        else this.begin('inElement');
      } else if (mode === 'afterElement') {
        this.pos++;
        if (c === 0x2c) {
          this.mode = 'element';
          this.first = false;
        } else if (c === 0x5d) {
          this.flush(out);
          this.mode = 'afterMember';
        } else throw new NotLists('"," or "]" expected');
      }
    }
  }

  private begin(mode: Mode): void {
    this.mode = mode;
    this.start = this.pos;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
  }

  /**
   * Moves `pos` to the end of the value that starts at `start`: true when it ends in these bytes (a number or literal
   * ends at the delimiter after it), false when more are needed (the state is kept, so the scan resumes).
   */
  private scan(): boolean {
    const b = this.bytes;
    let { depth, inString, escaped } = this;
    for (let i = this.pos; i < b.length; i++) {
      const c = b[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) {
          inString = false;
          if (depth === 0) return this.stop(i + 1);
        }
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (depth === 0) return this.stop(i);
        if (--depth === 0) return this.stop(i + 1);
      } else if (depth === 0 && (c === 0x2c || isSpace(c))) return this.stop(i);
    }
    this.pos = b.length;
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return false;
  }

  private stop(end: number): true {
    this.pos = end;
    return true;
  }

  /** Parses the complete elements met so far in one JSON.parse. */
  private flush(out: { list: Name; value: unknown }[]): void {
    if (this.batchFrom < 0) return;
    const values = parse(`[${this.bytes.toString('utf8', this.batchFrom, this.batchTo)}]`) as unknown[];
    for (const value of values) out.push({ list: this.list!, value });
    this.batchFrom = this.batchTo = -1;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new NotLists((error as Error).message);
  }
}
