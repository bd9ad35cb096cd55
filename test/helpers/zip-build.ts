import yazl from 'yazl';

export interface ZipEntry {
  name: string;
  data: Buffer | string;
  compress?: boolean;
}

/**
 * A zip built in memory with yazl. `renames` then rewrites entry names byte for byte (same length), because yazl
 * refuses the hostile names (`../x`) that tests need.
 */
export async function buildZip(entries: ZipEntry[], renames: [string, string][] = []): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data), e.name, { compress: e.compress ?? true });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  const buffer = Buffer.concat(chunks);
  for (const [from, to] of renames) {
    if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('renames keep the name length');
    const fromBytes = Buffer.from(from);
    for (let at = buffer.indexOf(fromBytes); at >= 0; at = buffer.indexOf(fromBytes, at + 1)) Buffer.from(to).copy(buffer, at);
  }
  return buffer;
}
