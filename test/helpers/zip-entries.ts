import yauzl from 'yauzl';

/** Every file entry of a zip held in memory, by name (test archives are small). */
export async function zipEntries(zip: Buffer): Promise<Map<string, Buffer>> {
  const file = await yauzl.fromBufferPromise(zip, { lazyEntries: true });
  const entries = new Map<string, Buffer>();
  for await (const entry of file.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    const chunks: Buffer[] = [];
    for await (const chunk of await file.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    entries.set(entry.fileName, Buffer.concat(chunks));
  }
  return entries;
}
