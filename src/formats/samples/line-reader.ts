import { createReadStream } from 'node:fs';

/** A line of a file that broke a rule; imports answer 422 naming it. */
export class LineError extends Error {
  constructor(
    readonly line: number,
    message: string,
    readonly file?: string,
  ) {
    super(message);
  }
}

/**
 * The lines of a UTF-8 file with their 1-based numbers, read in chunks (never the whole file) and yielded a chunk's
 * worth at a time (a million lines cost a thousand awaits, not a million). A line longer than `maxLineBytes` is a
 * LineError; `\r\n` endings and a leading BOM are accepted; blank lines are skipped.
 */
export async function* readLines(path: string, maxLineBytes: number): AsyncGenerator<{ line: number; text: string }[]> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (bytes: Buffer, at: number) => {
    try {
      return decoder.decode(bytes);
    } catch {
      throw new LineError(at, 'is not valid UTF-8');
    }
  };
  const finish = (tail: Buffer) => {
    line++;
    let bytes = pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
    pending = [];
    pendingBytes = 0;
    if (line === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, -1);
    return decode(bytes, line);
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    const batch: { line: number; text: string }[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      if (pendingBytes + nl - start > maxLineBytes) throw new LineError(line + 1, `is longer than ${maxLineBytes} bytes`);
      const text = finish(chunk.subarray(start, nl));
      if (text.trim() !== '') batch.push({ line, text });
      start = nl + 1;
    }
    if (batch.length > 0) yield batch;
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxLineBytes) throw new LineError(line + 1, `is longer than ${maxLineBytes} bytes`);
    }
  }
  if (pendingBytes > 0) {
    const text = finish(Buffer.alloc(0));
    if (text.trim() !== '') yield [{ line, text }];
  }
}

/** Parses one JSON Lines record (JSON.parse only: nothing is evaluated); it must be an object. */
export function parseJsonLine(line: number, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new LineError(line, `is not valid JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LineError(line, 'is not a JSON object');
  return value as Record<string, unknown>;
}
