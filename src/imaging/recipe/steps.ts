/**
 * The concrete transform steps of one output image, with every sampled parameter: the lineage a version records.
 * Plain JSON, so a step list can be stored, shown through the API and replayed to byte-identical output.
 */
import type { ContrastMethod, ResizeMode, Rotate90 } from './recipe.js';

export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type Step =
  | { op: 'classes'; remap: Record<string, string>; drop: string[] }
  /** Pixels turned upright by their EXIF orientation; annotations (drawn on the upright image) stay. */
  | { op: 'auto_orient'; orientation: number }
  /** Pixels kept in stored order; annotations move from the upright frame into it. */
  | { op: 'strip_orientation'; orientation: number }
  | ({ op: 'static_crop' } & Region)
  | ({ op: 'tile'; row: number; column: number; rows: number; columns: number } & Region)
  | {
      op: 'resize';
      mode: ResizeMode;
      /** Canvas size. */
      width: number;
      height: number;
      /** Size the image is scaled to before it is padded (letterbox) or cropped (fill) onto the canvas. */
      scaled_width: number;
      scaled_height: number;
      scale_x: number;
      scale_y: number;
      pad_left: number;
      pad_top: number;
      crop_left: number;
      crop_top: number;
    }
  | { op: 'flip'; axis: 'horizontal' | 'vertical' }
  | { op: 'rotate_90'; turn: Rotate90 }
  /** The region of the canvas that is enlarged back to the whole canvas. */
  | ({ op: 'crop_zoom'; zoom_percent: number } & Region)
  | { op: 'rotate'; degrees: number }
  | { op: 'shear'; horizontal_degrees: number; vertical_degrees: number }
  | { op: 'mosaic'; center_x: number; center_y: number; partners: MosaicPartner[] }
  | { op: 'grayscale' }
  | { op: 'contrast'; method: Exclude<ContrastMethod, 'none'> }
  | { op: 'blur'; sigma: number }
  | { op: 'hue'; degrees: number }
  | { op: 'saturation'; percent: number }
  | { op: 'brightness'; percent: number }
  | { op: 'exposure'; percent: number }
  | { op: 'contrast_adjust'; percent: number }
  | { op: 'noise'; percent: number; seed: number }
  | { op: 'cutout'; rects: Region[] };

/** Another source image placed in one quadrant of a mosaic, with the steps that prepared it. */
export interface MosaicPartner {
  image_id: number | string;
  steps: Step[];
}

export type StepOf<K extends Step['op']> = Extract<Step, { op: K }>;

export interface Size {
  width: number;
  height: number;
}
