import type { ImageRecord, LabelClass, QcDisagreement, QcShape } from '../../types.js';
import { ShapesOverlay, type OverlayShape } from '../shapes-overlay.js';
import { colourOf } from './figures.js';

export interface VersionLayer {
  key: string;
  /** The annotator whose version it is; none for the merge's proposal. */
  userId?: number;
  name: string;
  shapes: QcShape[];
  colour: string;
  dashed?: boolean;
}

/** The layers of a disagreement: each annotator's version in their colour, then the merge's proposal dashed. */
export function layersOf(entry: QcDisagreement, nameOf: (userId: number) => string): VersionLayer[] {
  const versions = entry.versions.map((v, i) => ({ key: `user-${v.user_id}`, userId: v.user_id, name: nameOf(v.user_id), shapes: v.shapes, colour: colourOf(i) }));
  return [...versions, { key: 'merge', name: 'Consensus merge', shapes: entry.proposal, colour: '#111111', dashed: true }];
}

/** Every visible layer drawn over the image, each shape labelled with whose it is and its class. */
export function VersionsOverlay({ image, layers, classes }: { image: ImageRecord; layers: VersionLayer[]; classes: LabelClass[] }) {
  const names = new Map(classes.map((c) => [c.id, c.name]));
  const shapes: OverlayShape[] = layers.flatMap((layer) =>
    layer.shapes.map((s, i) => ({
      key: `${layer.key}:${i}`,
      type: s.annotation_type,
      geometry: s.geometry,
      color: layer.colour,
      label: `${layer.name}: ${names.get(s.class_id) ?? `class ${s.class_id}`}`,
      dashed: layer.dashed,
    })),
  );
  return (
    <figure className="annotated-image">
      <ShapesOverlay src={`/api/projects/${image.project_id}/images/file/${encodeURIComponent(image.filename)}`} alt={image.original_name} width={image.width} height={image.height} shapes={shapes} maxHeight="60vh" />
    </figure>
  );
}
