import { Readable } from 'node:stream';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { CanonicalImageRecordRow, CanonicalRepository } from './canonical.repository.js';
import { followedBy, type CanonicalSamples } from './canonical-samples.service.js';
import type { CanonicalQuery } from './canonical.schemas.js';

const IMAGE_PAGE = 1000;
/** Characters per piece written to the response. */
const CHUNK_CHARS = 64 * 1024;

export interface CanonicalStream {
  contentType: string;
  body: Readable;
}

/**
 * The canonical export: one universal record per image, then per sample (canonical-samples.service.ts), written straight from keyset
 * pages of rows. Records are built as text: the stored geometry is already JSON and goes in unparsed, so the stream
 * costs one string per record and holds one page in memory.
 */
export class CanonicalService {
  constructor(
    private readonly access: ProjectAccess,
    private readonly repository: CanonicalRepository,
    /** The sample records, streamed after the images. */
    private readonly samples?: CanonicalSamples,
    /** Images per page (tests lay out small pages). */
    private readonly pageSize = IMAGE_PAGE,
  ) {}

  async stream(caller: Caller, projectId: number, query: CanonicalQuery): Promise<CanonicalStream> {
    // An export of the whole project, as POST …/export is: an annotator kept to their assignments gets 403.
    await this.access.wholeProject(caller, projectId, 'export');
    const json = query.format === 'json';
    const images = this.records(projectId, query.split);
    const lines = this.samples ? followedBy(images, () => this.samples!.pages(projectId, query.split)) : images;
    // Written in pieces of about CHUNK_CHARS: a page joined whole (2 MB) would be a large object each time, which V8
    // only frees at a full collection, so a stream of them grows the heap by tens of megabytes; pieces this size die
    // young.
    async function* document(): AsyncGenerator<string> {
      let first = true;
      if (json) yield '[';
      for await (const page of lines) {
        for (let from = 0; from < page.length; ) {
          let to = from;
          let size = 0;
          while (to < page.length && (to === from || size + page[to].length <= CHUNK_CHARS)) size += page[to++].length;
          const piece = page.slice(from, to);
          yield json ? (first ? '' : ',') + piece.join(',') : piece.join('\n') + '\n';
          first = false;
          from = to;
        }
      }
      if (json) yield ']';
    }
    return { contentType: json ? 'application/json' : 'application/x-ndjson', body: Readable.from(document(), { objectMode: false }) };
  }

  /**
   * Pages of records, as JSON text. The pages are laid out first (pageStarts) and read `pagesAhead` pages ahead of
   * the one written out. Images added after the layout are read by keyset pages on from the last page.
   */
  private async *records(projectId: number, split?: string): AsyncGenerator<string[]> {
    const starts = await this.repository.pageStarts(projectId, this.pageSize, split);
    const last = starts.length - 1;
    const read = (k: number) => this.repository.imageRecords(projectId, starts[k], k < last ? { through: starts[k + 1] } : { limit: this.pageSize }, split);
    const ahead: Promise<CanonicalImageRecordRow[]>[] = [];
    let asked = 0;
    const ask = () => {
      const page = read(asked++);
      // A page asked for ahead and never read (the client went away) must not be an unhandled rejection.
      page.catch(() => undefined);
      ahead.push(page);
    };
    while (asked <= Math.min(last, this.repository.pagesAhead)) ask();
    let images: CanonicalImageRecordRow[] = [];
    while (ahead.length > 0) {
      images = await ahead.shift()!;
      if (asked <= last) ask();
      if (images.length > 0) yield images.map(record);
    }
    while (images.length === this.pageSize) {
      images = await this.repository.imageRecords(projectId, images[images.length - 1][0], { limit: this.pageSize }, split);
      if (images.length > 0) yield images.map(record);
    }
  }
}

/** The record the database wrote, with the file's URL-encoded name and the record-level label put in. */
function record([, filename, head, media, annotations, tail]: CanonicalImageRecordRow): string {
  return `${head}${encodeURIComponent(filename)}${media}${annotations ?? ''}],"label":${labelOf(annotations)}${tail}`;
}

/**
 * The record-level label: the class of the image's last classification annotation, as JSON text. The annotations'
 * text is only parsed when it holds one (the database quotes every string, so the marker cannot occur elsewhere).
 */
function labelOf(annotations: string | null): string {
  if (annotations === null || !annotations.includes('"type":"classification"')) return 'null';
  const list = JSON.parse(`[${annotations}]`) as { label: string; type: string }[];
  return JSON.stringify(list.findLast((a) => a.type === 'classification')!.label);
}
