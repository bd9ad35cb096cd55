import type { Annotation, ImageRecord, LabelClass } from '../types.js';

import { ShapesOverlay } from './shapes-overlay.js';

/**
 * An image with its annotations drawn over it, read-only, exactly as stored (masks pixel for pixel), at the image's
 * aspect ratio; each shape carries its class name, and model predictions are dashed and marked ("accepted
 * prediction" or "suggestion" with the confidence) so a reviewer sees what a person drew and what a model proposed.
 */
export function AnnotatedImage({ image, annotations, classes }: { image: ImageRecord; annotations: Annotation[]; classes: LabelClass[] }) {
  const byId = new Map(classes.map((c) => [c.id, c]));
  const color = (id: number) => byId.get(id)?.color ?? '#ff00ff';
  const tags = annotations.filter((a) => a.annotation_type === 'classification');
  const fromModel = (a: Annotation) => a.source !== 'manual' && a.source !== 'import';
  const shapes = annotations
    .filter((a) => a.annotation_type !== 'classification')
    .map((a) => {
      const name = byId.get(a.class_id)?.name ?? `class ${a.class_id}`;
      const model = fromModel(a);
      const conf = a.confidence == null ? '' : ` ${Math.round(a.confidence * 100)}%`;
      const label = !model ? name : a.status === 'suggested' ? `${name}${conf} · suggestion` : `${name}${conf} · accepted prediction`;
      return { key: a.id, type: a.annotation_type, geometry: a.geometry, color: color(a.class_id), label, dashed: model, skeleton: byId.get(a.class_id)?.skeleton };
    });
  const accepted = annotations.filter((a) => fromModel(a) && a.status !== 'suggested').length;
  const suggested = annotations.filter((a) => a.status === 'suggested').length;
  return (
    <figure className="annotated-image">
      <ShapesOverlay
        src={`/api/projects/${image.project_id}/images/file/${encodeURIComponent(image.filename)}`}
        alt={image.original_name}
        width={image.width}
        height={image.height}
        shapes={shapes}
      />
      {(tags.length > 0 || accepted > 0 || suggested > 0) && (
        <figcaption>
          {tags.map((t) => (
            <span key={t.id} className="chip" style={{ borderColor: color(t.class_id) }}>
              {byId.get(t.class_id)?.name ?? `class ${t.class_id}`}
            </span>
          ))}
          {accepted > 0 && <span className="chip" data-testid="accepted-predictions">{accepted} accepted model prediction{accepted === 1 ? '' : 's'} (dashed)</span>}
          {suggested > 0 && <span className="chip" data-testid="open-suggestions">{suggested} suggestion{suggested === 1 ? '' : 's'} not yet accepted</span>}
        </figcaption>
      )}
    </figure>
  );
}

/** "car 3 · person 1": what an image's annotations are, by class. */
export function classSummary(annotations: Annotation[], classes: LabelClass[]): string {
  const counts = new Map<number, number>();
  for (const a of annotations) counts.set(a.class_id, (counts.get(a.class_id) ?? 0) + 1);
  const names = new Map(classes.map((c) => [c.id, c.name]));
  return [...counts].map(([id, n]) => `${names.get(id) ?? `class ${id}`} ${n}`).join(' · ') || 'no annotations';
}
