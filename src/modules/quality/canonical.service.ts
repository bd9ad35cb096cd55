import { Readable } from 'node:stream';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { CanonicalImageRecordRow, CanonicalRepository } from './canonical.repository.js';
import { followedBy, type CanonicalSamples } from './canonical-samples.js';
import type { CanonicalQuery } from './quality.schemas.js';

const IMAGE_PAGE = 1000;

export interface CanonicalStream {
  contentType: string;
  body: Readable;
}

/**
 * The canonical export: one universal record per image, then per sample (canonical-samples.ts), written straight from keyset
 * pages of rows. Records are built as text: the stored geometry is already JSON and goes in unparsed, so the stream
 * costs one string per record and holds one page in memory.
 */
export class CanonicalService {
  constructor(
    private readonly access: ProjectAccess,
    private readonly repository: CanonicalRepository,
    /** The sample records, streamed after the images. */
    private readonly samples?: CanonicalSamples,
  ) {}

  async stream(caller: Caller, projectId: number, query: CanonicalQuery): Promise<CanonicalStream> {
    await this.access.project(caller, projectId, 'export');
    const json = query.format === 'json';
    const images = this.records(projectId, query.split);
    const lines = this.samples ? followedBy(images, () => this.samples!.pages(projectId, query.split)) : images;
    async function* document(): AsyncGenerator<string> {
      let first = true;
      if (json) yield '[';
      for await (const page of lines) {
        if (page.length === 0) continue;
        if (json) {
          yield (first ? '' : ',') + page.join(',');
        } else {
          yield page.join('\n') + '\n';
        }
        first = false;
      }
      if (json) yield ']';
    }
    return { contentType: json ? 'application/json' : 'application/x-ndjson', body: Readable.from(document(), { objectMode: false }) };
  }

  /** Pages of records, as JSON text. */
  private async *records(projectId: number, split?: string): AsyncGenerator<string[]> {
    for (let after = 0; ; ) {
      const images = await this.repository.imageRecords(projectId, after, IMAGE_PAGE, split);
      if (images.length === 0) return;
      yield images.map((image) => record(projectId, image));
      if (images.length < IMAGE_PAGE) return;
      after = images[images.length - 1].id;
    }
  }
}

function record(projectId: number, image: CanonicalImageRecordRow): string {
  const media = {
    uri: `/api/projects/${projectId}/images/file/${encodeURIComponent(image.filename)}`,
    mime_type: image.mime_type,
    sha256: image.sha256,
    width: image.width,
    height: image.height,
    size_bytes: Number(image.size_bytes),
    filename: image.filename,
  };
  const metadata = { original_name: image.original_name, review_state: image.review_state, created_at: image.created_at, image_id: image.id };
  return `{"id":"image:${image.id}","modality":"image","split":${image.split === null ? 'null' : JSON.stringify(image.split)},"media":${JSON.stringify(media)},"annotations":[${image.annotations ?? ''}],"label":${labelOf(image.annotations)},"spans":null,"value":null,"metadata":${JSON.stringify(metadata)}}`;
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
