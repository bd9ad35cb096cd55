import { api } from '../api.js';
import { asAnnotation, type Annotation, type ImageRecord } from '../types.js';
import type { LoadedImage } from './editor-controller.js';
import type { TaskDraft } from './annotation-store.js';

const PREVIEW_MAX = 2048;
const PAGE = 10000;
/** Images kept decoded: enough for a video's frames prefetched ahead of playback and a few behind. */
const CACHED = 24;

async function allAnnotations(imageId: number): Promise<Annotation[]> {
  const out: Annotation[] = [];
  let after: number | null = null;
  for (;;) {
    const page: Annotation[] = (await api.get('/api/images/{image_id}/annotations', { path: { image_id: imageId }, query: { limit: PAGE, after: after ?? undefined } })).map(asAnnotation);
    out.push(...page);
    if (page.length < PAGE) return out;
    after = page[page.length - 1].id;
  }
}

/**
 * Where the editor reads an image's shapes and saves them: the image's own annotations (each saved on its own), or
 * a quality-control task's version of the image (saved whole, see task-shapes.ts).
 */
export interface ShapeSource {
  load(imageId: number): Promise<Annotation[]>;
  /** Saves the whole shape list at once; absent: each annotation is written through the annotations routes. */
  save?(imageId: number, shapes: TaskDraft[]): Promise<void>;
}

const imageAnnotations: ShapeSource = { load: allAnnotations };

interface Decoded {
  source: HTMLImageElement | ImageBitmap;
  preview: ImageBitmap | null;
  width: number;
  height: number;
}

/**
 * Decodes an image for the editor. A large one (say 8000 × 6000) is fetched as a blob and decoded by
 * createImageBitmap, which runs off the main thread, into a full-size bitmap plus a downscaled preview for
 * zoomed-out frames: opening it does not freeze the page, and painting never decodes it again.
 */
async function decodeImage(url: string, width: number, height: number, frame: boolean): Promise<Decoded> {
  const longest = Math.max(width, height);
  if (frame && longest <= PREVIEW_MAX) {
    // A video's frame: decoded off the main thread into a bitmap that stays decoded, so stepping and playback
    // draw prefetched frames without decoding them again.
    const res = await fetch(url, { credentials: 'same-origin' });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const source = await createImageBitmap(await res.blob());
    return { source, preview: null, width: source.width, height: source.height };
  }
  if (longest > PREVIEW_MAX) {
    const res = await fetch(url, { credentials: 'same-origin' });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const blob = await res.blob();
    const k = PREVIEW_MAX / longest;
    const [source, preview] = await Promise.all([
      createImageBitmap(blob, { imageOrientation: 'from-image' }),
      createImageBitmap(blob, { imageOrientation: 'from-image', resizeWidth: Math.round(width * k), resizeHeight: Math.round(height * k), resizeQuality: 'medium' }),
    ]);
    return { source, preview, width: source.width, height: source.height };
  }
  const img = new Image();
  img.decoding = 'async';
  img.src = url;
  await img.decode();
  return { source: img, preview: null, width: img.naturalWidth, height: img.naturalHeight };
}

/** Loads images with their annotations, keeping a few in memory so the next one opens at once. */
export class ImageLoader {
  private cache = new Map<number, Promise<LoadedImage>>();
  /** The decoded pixels, kept when only the annotations are forgotten (a track edit changes every frame's shapes). */
  private pixels = new Map<number, Promise<Decoded>>();

  constructor(
    private readonly projectId: number,
    private readonly shapes: ShapeSource = imageAnnotations,
  ) {}

  load(record: ImageRecord): Promise<LoadedImage> {
    let entry = this.cache.get(record.id);
    if (!entry) {
      let decoding = this.pixels.get(record.id);
      if (!decoding) {
        const url = `/api/projects/${this.projectId}/images/file/${encodeURIComponent(record.filename)}`;
        decoding = decodeImage(url, record.width, record.height, record.video_id != null);
        decoding.catch(() => this.pixels.delete(record.id));
        this.pixels.set(record.id, decoding);
      }
      entry = (async () => {
        const [img, annotations] = await Promise.all([decoding, this.shapes.load(record.id)]);
        const save = this.shapes.save?.bind(this.shapes, record.id);
        return {
          imageId: record.id,
          width: record.width || img.width,
          height: record.height || img.height,
          source: img.source,
          preview: img.preview,
          annotations,
          frame: record.frame,
          save,
        };
      })();
      entry.catch(() => this.cache.delete(record.id));
      this.cache.set(record.id, entry);
      while (this.cache.size > CACHED) this.cache.delete(this.cache.keys().next().value!);
      while (this.pixels.size > CACHED) this.pixels.delete(this.pixels.keys().next().value!);
    }
    return entry;
  }

  /** Forgets an image, so that coming back to it reads the annotations saved since. */
  forget(imageId: number): void {
    this.cache.delete(imageId);
  }

  /** Forgets these images' annotations (a track changed on all its frames), keeping their pixels, except `keep`. */
  forgetAnnotations(imageIds: Iterable<number>, keep: number | null): void {
    for (const id of imageIds) if (id !== keep) this.cache.delete(id);
  }
}
