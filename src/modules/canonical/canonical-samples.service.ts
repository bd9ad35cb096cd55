/**
 * The samples' part of the canonical export: one universal record per sample, after the images, from keyset pages of
 * rows. Records are built as text: the stored data, labels, spans and value are JSON already and go in unparsed (only
 * media samples' facts and the metadata are re-read), so a page costs one string per record.
 */
import type { CanonicalRepository, CanonicalSampleRow } from './canonical.repository.js';

const SAMPLE_PAGE = 1000;

/** The URL a media sample's bytes are served from (the samples module's `GET /api/samples/{id}/file`). */
const fileUri = (sampleId: number) => `/api/samples/${sampleId}/file`;

export class CanonicalSamples {
  constructor(private readonly repository: CanonicalRepository) {}

  /** Pages of sample records, as JSON text, in id order; `split` keeps one split. */
  async *pages(projectId: number, split?: string): AsyncGenerator<string[]> {
    for (let after = 0; ; ) {
      const rows = await this.repository.samplePage(projectId, after, SAMPLE_PAGE, split);
      if (rows.length === 0) return;
      yield rows.map(sampleRecord);
      if (rows.length < SAMPLE_PAGE) return;
      after = rows[rows.length - 1].id;
    }
  }
}

/** Yields every page of `first`, then every page of `then`. */
export async function* followedBy<T>(first: AsyncIterable<T>, then: () => AsyncIterable<T>): AsyncGenerator<T> {
  yield* first;
  yield* then();
}

export function sampleRecord(row: CanonicalSampleRow): string {
  const media = row.modality === 'audio' || row.modality === 'video' ? mediaOf(row) : row.data;
  let annotations = '[]';
  let spans = 'null';
  if (row.modality === 'text') spans = row.spans ?? '[]';
  else if (row.spans && (row.modality === 'audio' || row.modality === 'video')) {
    const segments = JSON.parse(row.spans) as { start_s: number; end_s: number; label: string }[];
    annotations = JSON.stringify(segments.map((s) => ({ label: s.label, type: 'segment', geometry: { start_s: s.start_s, end_s: s.end_s } })));
  }
  const label = row.labels ?? (row.label === null ? 'null' : JSON.stringify(row.label));
  const stored = row.metadata ? (JSON.parse(row.metadata) as Record<string, unknown>) : {};
  const metadata = JSON.stringify({ ...stored, sample_id: row.id, review_state: row.review_state, created_at: row.created_at });
  return `{"id":"sample:${row.id}","modality":"${row.modality}","split":${row.split === null ? 'null' : JSON.stringify(row.split)},"media":${media},"annotations":${annotations},"label":${label},"spans":${spans},"value":${row.value ?? 'null'},"metadata":${metadata}}`;
}

function mediaOf(row: CanonicalSampleRow): string {
  const data = JSON.parse(row.data) as { file?: string; mime_type?: string; size_bytes?: number; duration_s?: number | null; sample_rate?: number; fps?: number; channels?: number };
  if (!row.sha256) return 'null';
  return JSON.stringify({
    uri: fileUri(row.id),
    mime_type: data.mime_type ?? 'application/octet-stream',
    sha256: row.sha256,
    size_bytes: data.size_bytes,
    filename: data.file,
    duration_s: data.duration_s ?? null,
    sample_rate: data.sample_rate,
    fps: data.fps,
    channels: data.channels,
  });
}
