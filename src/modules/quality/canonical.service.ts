import { Readable } from 'node:stream';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { CanonicalAnnotationRow, CanonicalImageRow, CanonicalRepository } from './canonical.repository.js';
import { followedBy, type CanonicalSamples } from './canonical-samples.js';
import type { CanonicalQuery } from './quality.schemas.js';

const IMAGE_PAGE = 1000;
const ANNOTATION_CHUNK = 20_000;

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
    const classes = await this.repository.classNames(projectId);
    const json = query.format === 'json';
    const images = this.records(projectId, classes, query.split);
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
  private async *records(projectId: number, classes: Map<number, string>, split?: string): AsyncGenerator<string[]> {
    const names = new Map([...classes].map(([id, name]) => [id, JSON.stringify(name)]));
    for (let after = 0; ; ) {
      const images = await this.repository.images(projectId, after, IMAGE_PAGE, split);
      if (images.length === 0) return;
      const last = images[images.length - 1].id;
      const byImage = new Map<number, CanonicalAnnotationRow[]>();
      for (let from = { imageId: images[0].id, id: 0 }; ; ) {
        const rows = await this.repository.annotations(projectId, from, last, ANNOTATION_CHUNK);
        for (const row of rows) {
          const list = byImage.get(row.image_id);
          if (list) list.push(row);
          else byImage.set(row.image_id, [row]);
        }
        if (rows.length < ANNOTATION_CHUNK) break;
        const tail = rows[rows.length - 1];
        from = { imageId: tail.image_id, id: tail.id };
      }
      yield images.map((image) => record(projectId, image, byImage.get(image.id) ?? [], names));
      if (images.length < IMAGE_PAGE) return;
      after = last;
    }
  }
}

function record(projectId: number, image: CanonicalImageRow, annotations: CanonicalAnnotationRow[], names: Map<number, string>): string {
  let label = 'null';
  const parts: string[] = [];
  for (const a of annotations) {
    const name = names.get(a.class_id) ?? '""';
    if (a.annotation_type === 'classification') label = name;
    parts.push(
      `{"id":${a.id},"label":${name},"class_id":${a.class_id},"type":${JSON.stringify(a.annotation_type)},"geometry":${a.geometry},"confidence":${a.confidence === null ? 'null' : Number(a.confidence)},"source":${JSON.stringify(a.source)}}`,
    );
  }
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
  return `{"id":"image:${image.id}","modality":"image","split":${image.split === null ? 'null' : JSON.stringify(image.split)},"media":${JSON.stringify(media)},"annotations":[${parts.join(',')}],"label":${label},"spans":null,"value":null,"metadata":${JSON.stringify(metadata)}}`;
}
