import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { decodeRle } from '../editor/mask.js';
import { classPaths, traceShape, type ClassPaths, type PathSink } from '../editor/renderer.js';
import { SvgPath } from '../editor/svg-path.js';
import { asAnnotation, type Annotation, type ImageListRecord, type LabelClass, type MaskGeometry } from '../types.js';

/** Shapes read per image once per page load: a grid scrolled back and forth asks the server once. */
const cache = new Map<number, Promise<Annotation[]>>();

/** Forgets what was read (after the grid reloads: the shapes may have changed). */
export function clearOverlayCache(): void {
  cache.clear();
}

function shapesOf(imageId: number): Promise<Annotation[]> {
  let found = cache.get(imageId);
  if (!found) {
    found = api.get('/api/images/{image_id}/annotations', { path: { image_id: imageId } }).then((list) => list.map(asAnnotation), (): Annotation[] => []);
    cache.set(imageId, found);
  }
  return found;
}

/** The grid cell's side in CSS pixels (styles.css `.grid-cell`): points and keypoints are drawn a few of them wide. */
const CELL_PX = 168;
/** A mask is drawn as its cells on a grid at most this many cells a side: a thumbnail shows no finer detail. */
const MASK_CELLS = 64;

/**
 * The image's labels over its grid thumbnail (issue 30), one SVG per thumbnail, cropped as `object-fit: cover` crops
 * the picture (the SVG slices the same way): every shape as its real outline (traced by the editor's traceShape:
 * polygons of several parts with holes, rotated boxes, ellipses, polylines, points, keypoints by their skeleton's
 * edges) and masks by their pixels, a few paths per class whatever the number of shapes; suggestions dashed. The
 * image's classes are chips over the thumbnail, as the editor draws them over the image (suggested ones dashed with
 * `?`). Images with neither annotations nor open suggestions ask nothing.
 */
export function ThumbnailOverlay({ image, classes }: { image: ImageListRecord; classes: readonly LabelClass[] }) {
  const [shapes, setShapes] = useState<Annotation[]>([]);
  const labelled = image.annotation_count + image.suggestion_count > 0;
  useEffect(() => {
    let live = true;
    if (labelled) void shapesOf(image.id).then((list) => live && setShapes(list));
    return () => {
      live = false;
    };
  }, [image.id, labelled]);
  if (shapes.length === 0) return null;
  const byId = new Map(classes.map((c) => [c.id, c]));
  const labels = shapes.filter((a) => a.annotation_type === 'classification');
  const groups = tracedGroups(shapes, byId, CELL_PX / Math.max(1, Math.min(image.width, image.height)));
  const stroke = Math.max(2, Math.max(image.width, image.height) / 120);
  return (
    <>
      {groups.length > 0 && (
        <svg className="thumb-overlay" data-testid="thumb-overlay" viewBox={`0 0 ${image.width} ${image.height}`} preserveAspectRatio="xMidYMid slice" aria-hidden="true">
          {groups.map(({ key, color, suggested, types, paths }) => {
            const dash = suggested ? `${stroke * 2} ${stroke * 2}` : undefined;
            return (
              <g key={key} data-class-color={color} data-suggested={suggested || undefined} data-types={types.join(' ')}>
                {paths.fill && <path d={paths.fill.d} fill={color} fillOpacity={0.3} fillRule="evenodd" data-part="fill" />}
                {paths.stroke.d && <path d={paths.stroke.d} fill="none" stroke={color} strokeWidth={stroke} strokeDasharray={dash} data-part="outline" />}
                {paths.dots && <path d={paths.dots.d} fill={color} data-part="dots" />}
                {paths.hollow && <path d={paths.hollow.d} fill="none" stroke={color} strokeWidth={stroke / 2} data-part="hollow" />}
              </g>
            );
          })}
        </svg>
      )}
      {labels.length > 0 && (
        <span className="thumb-classes" data-testid="thumb-classes">
          {labels.map((a) => {
            const cls = byId.get(a.class_id);
            return (
              <span key={a.id} className={`chip${a.status === 'suggested' ? ' suggested' : ''}`} data-class-id={a.class_id} style={{ borderColor: cls?.color ?? '#888' }}
                title={a.status === 'suggested' ? 'Suggested class' : 'Class'}>
                {cls?.name ?? `class ${a.class_id}`}
                {a.status === 'suggested' ? '?' : ''}
              </span>
            );
          })}
        </span>
      )}
    </>
  );
}

interface Group {
  key: string;
  color: string;
  suggested: boolean;
  types: string[];
  paths: ClassPaths<SvgPath>;
}

/** The shapes' paths, one group per class and status (accepted or suggested); `scale`: screen pixels per image pixel. */
function tracedGroups(shapes: readonly Annotation[], classes: Map<number, LabelClass>, scale: number): Group[] {
  const groups = new Map<string, Group>();
  for (const a of shapes) {
    if (a.annotation_type === 'classification') continue;
    const suggested = a.status === 'suggested';
    const key = `${a.class_id}:${suggested ? 's' : 'a'}`;
    let group = groups.get(key);
    if (!group) {
      group = { key, color: classes.get(a.class_id)?.color ?? '#ffcc00', suggested, types: [], paths: classPaths(() => new SvgPath()) };
      groups.set(key, group);
    }
    if (!group.types.includes(a.annotation_type)) group.types.push(a.annotation_type);
    if (a.annotation_type === 'mask') traceMask((a.geometry as MaskGeometry).rle, (group.paths.fill ??= group.paths.newPath()));
    else traceShape(group.paths, a, scale, classes.get(a.class_id)?.skeleton ?? null, true);
  }
  return [...groups.values()];
}

/** A mask's pixels as runs of cells on a grid of at most MASK_CELLS a side (a cell is in when its centre pixel is). */
function traceMask(rle: MaskGeometry['rle'], path: PathSink): void {
  const bitmap = decodeRle(rle);
  const step = Math.max(1, Math.ceil(Math.max(bitmap.width, bitmap.height) / MASK_CELLS));
  const at = (x: number, y: number) => bitmap.data[Math.min(bitmap.height - 1, y) * bitmap.width + Math.min(bitmap.width - 1, x)] === 1;
  for (let y = 0; y < bitmap.height; y += step) {
    let start = -1;
    for (let x = 0; x <= bitmap.width; x += step) {
      const inside = x < bitmap.width && at(x + (step >> 1), y + (step >> 1));
      if (inside && start < 0) start = x;
      if (!inside && start >= 0) {
        path.rect(start, y, Math.min(x, bitmap.width) - start, Math.min(step, bitmap.height - y));
        start = -1;
      }
    }
  }
}
