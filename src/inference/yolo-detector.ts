import type { Preprocessing } from '../imaging/recipe/index.js';
import { UnsupportedModelError } from './errors.js';
import type { LetterboxOptions } from './letterbox.js';
import { nonMaxSuppression } from './nms.js';
import { parseUltralyticsMetadata } from './onnx-metadata.js';
import { boxToOriginal, pointsToOriginal, servedInputs, servedPreprocessing, type ServedImage, type ServedInput } from './served-input.js';
import type { SessionPool } from './session-pool.js';
import type { ModelInfo } from './tensor-data.js';
import { orientedFromCorners, type YoloDecodeOptions, type YoloDetection } from './yolo-decode.js';
import { rotatedCorners } from '../imaging/geometry.js';
import { apply } from '../imaging/recipe/affine.js';

export interface NamedDetection extends YoloDetection {
  /** The class name from the model's metadata (or the names given at load), else null. */
  className: string | null;
}

export interface DetectionResult {
  /** Size of the oriented original image the boxes refer to. */
  width: number;
  height: number;
  detections: NamedDetection[];
}

/** Sizes and names a YOLO ONNX model declares: input `[1, 3, H, W]` (or Ultralytics' imgsz when dynamic). */
export interface DetectorShape {
  inputName: string;
  width: number;
  height: number;
  names: string[] | null;
  endToEnd: boolean;
  task: string | null;
  /** The preprocessing of the images it was trained on, applied to every image before its letterbox. */
  preprocessing: Preprocessing | null;
  /** Pose models: [keypoints, values per keypoint] from `kpt_shape` (else read from the output's height). */
  keypointShape: [number, number] | null;
  keypointNames: string[] | null;
  flipIndex: number[] | null;
}

/** `task`, when the registered model's is pose or obb, picks those layouts; otherwise the metadata's task stands. */
export function detectorShape(info: ModelInfo, names?: string[], task?: string): DetectorShape {
  const input = info.inputs[0];
  if (!input || input.dims.length !== 4 || (typeof input.dims[1] === 'number' && input.dims[1] !== 3)) {
    throw new UnsupportedModelError(`A detector needs one image input [1, 3, H, W]; this model's first input is [${input?.dims.join(', ') ?? ''}]`);
  }
  const metadata = parseUltralyticsMetadata(info.metadata);
  const [height, width] = [input.dims[2], input.dims[3]].map((dim, i) =>
    typeof dim === 'number' && dim > 0 ? dim : (metadata.imgsz?.[i] ?? 640),
  );
  return {
    inputName: input.name,
    width,
    height,
    names: names ?? metadata.names ?? null,
    endToEnd: metadata.endToEnd ?? false,
    // The metadata's own task (e.g. segment-semantic) stays; a registered pose or obb task picks those layouts.
    task: task === 'pose' || task === 'obb' ? task : (metadata.task ?? null),
    preprocessing: servedPreprocessing(info.metadata),
    keypointShape: metadata.keypointShape ?? null,
    keypointNames: metadata.keypointNames ?? null,
    flipIndex: metadata.flipIndex ?? null,
  };
}

/**
 * One loaded YOLO model: letterbox → run → decode. The image is decoded and resized in sharp's thread pool, and
 * the float tensor, the run, the decoding and NMS happen on the inference worker, so the event loop does no
 * per-pixel work and callers with two images in flight get the next image decoded during the current run.
 */
export class YoloDetector {
  readonly shape: DetectorShape;

  private constructor(
    private readonly pool: SessionPool,
    readonly modelId: string,
    readonly info: ModelInfo,
    names?: string[],
    task?: string,
  ) {
    this.shape = detectorShape(info, names, task);
  }

  static async load(pool: SessionPool, modelId: string, source: string | Uint8Array, names?: string[], task?: string): Promise<YoloDetector> {
    return new YoloDetector(pool, modelId, await pool.load(modelId, source), names, task);
  }

  /** Detections in the original image's pixels, after the preprocessing the model was trained with (if any). */
  async detect(image: Uint8Array, options: Omit<YoloDecodeOptions, 'classCount' | 'endToEnd'>, imageOptions?: LetterboxOptions): Promise<DetectionResult> {
    const pre = this.shape.preprocessing;
    if (!pre) return this.run(image, options, imageOptions);
    const served = await servedInputs(image, pre, imageOptions?.limitInputPixels);
    const parts = await Promise.all(served.inputs.map(async (input) => {
      const result = await this.run(input.image, options, imageOptions);
      return result.detections.flatMap((d) => toOriginal(d, input, served));
    }));
    // The tiles' detections as one image's; class-wise NMS drops duplicates found on both sides of a tile edge.
    const detections = parts.length === 1 ? parts[0] : mergeTiles(parts.flat(), options.iou, options.maxDetections);
    return { width: served.width, height: served.height, detections };
  }

  private async run(image: Uint8Array, options: Omit<YoloDecodeOptions, 'classCount' | 'endToEnd'>, imageOptions?: LetterboxOptions): Promise<DetectionResult> {
    const { width, height, inputName, names } = this.shape;
    const { detections, transform } = await this.pool.detect(
      this.modelId,
      image,
      { ...imageOptions, inputName, width, height },
      {
        ...options,
        classCount: names?.length,
        endToEnd: this.shape.endToEnd,
        semantic: this.shape.task === 'segment-semantic',
        ...(this.shape.task === 'pose' || this.shape.task === 'obb' ? { layout: this.shape.task } : {}),
        ...(this.shape.keypointShape ? { keypointShape: this.shape.keypointShape } : {}),
      },
    );
    return {
      width: transform.originalWidth,
      height: transform.originalHeight,
      detections: detections.map((d) => ({ ...d, className: names?.[d.classId] ?? null })),
    };
  }
}

function toOriginal(detection: NamedDetection, input: ServedInput, served: ServedImage): NamedDetection[] {
  const box = boxToOriginal(detection.box, input, served);
  if (!box) return [];
  const mapped: NamedDetection = { ...detection, box };
  if (detection.polygons) mapped.polygons = detection.polygons.map((polygon) => pointsToOriginal(polygon, input, served));
  // Keypoints unclamped, as decoded: one beyond the tile or the image stays where the model put it.
  if (detection.keypoints) mapped.keypoints = detection.keypoints.map(([x, y, confidence]) => [...apply(input.toOriginal, [x, y]), confidence]);
  if (detection.oriented) mapped.oriented = orientedFromCorners(rotatedCorners(detection.oriented).map((p) => apply(input.toOriginal, p)));
  return [mapped];
}

function mergeTiles(detections: NamedDetection[], iou: number, maxDetections = 300): NamedDetection[] {
  const candidates = detections.map((d, index) => ({ x1: d.box.x, y1: d.box.y, x2: d.box.x + d.box.width, y2: d.box.y + d.box.height, score: d.confidence, classId: d.classId, index }));
  return nonMaxSuppression(candidates, iou, maxDetections).map((c) => detections[c.index]);
}
