import { request } from '../api.js';
import type { Annotation, ImageRecord } from '../types.js';
import type { LoadedImage } from './editor-controller.js';

const PREVIEW_MAX = 2048;
const PAGE = 10000;

async function allAnnotations(imageId: number): Promise<Annotation[]> {
  const out: Annotation[] = [];
  let after: number | null = null;
  for (;;) {
    const q: string = after === null ? '' : `&after=${after}`;
    const page: Annotation[] = (await request<Annotation[]>('GET', `/api/images/${imageId}/annotations?limit=${PAGE}${q}`)).data;
    out.push(...page);
    if (page.length < PAGE) return out;
    after = page[page.length - 1].id;
  }
}

async function decodeImage(url: string): Promise<HTMLImageElement> {
  const img = new Image();
  img.decoding = 'async';
  img.src = url;
  await img.decode();
  return img;
}

/** A downscaled copy for zoomed-out painting: drawing a 48-megapixel image every frame would freeze the page. */
function previewOf(img: HTMLImageElement): HTMLCanvasElement | null {
  const longest = Math.max(img.naturalWidth, img.naturalHeight);
  if (longest <= PREVIEW_MAX) return null;
  const k = PREVIEW_MAX / longest;
  const c = document.createElement('canvas');
  c.width = Math.round(img.naturalWidth * k);
  c.height = Math.round(img.naturalHeight * k);
  c.getContext('2d')!.drawImage(img, 0, 0, c.width, c.height);
  return c;
}

/** Loads images with their annotations, keeping a few in memory so the next one opens at once. */
export class ImageLoader {
  private cache = new Map<number, Promise<LoadedImage>>();

  constructor(private readonly projectId: number) {}

  load(record: ImageRecord): Promise<LoadedImage> {
    let entry = this.cache.get(record.id);
    if (!entry) {
      entry = (async () => {
        const url = `/api/projects/${this.projectId}/images/file/${encodeURIComponent(record.filename)}`;
        const [img, annotations] = await Promise.all([decodeImage(url), allAnnotations(record.id)]);
        return {
          imageId: record.id,
          width: record.width || img.naturalWidth,
          height: record.height || img.naturalHeight,
          source: img,
          preview: previewOf(img),
          annotations,
        };
      })();
      entry.catch(() => this.cache.delete(record.id));
      this.cache.set(record.id, entry);
      while (this.cache.size > 6) this.cache.delete(this.cache.keys().next().value!);
    }
    return entry;
  }

  /** Forgets an image, so that coming back to it reads the annotations saved since. */
  forget(imageId: number): void {
    this.cache.delete(imageId);
  }
}
