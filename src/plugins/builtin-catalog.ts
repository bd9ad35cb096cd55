import { Type, type TSchema } from 'typebox';
import { FORMAT_DESCRIPTIONS, READABLE_FORMATS } from '../formats/readers/index.js';
import { WRITERS, type ExportFormat } from '../formats/writers/index.js';
import { AugmentationConfig, PreprocessingConfig } from '../imaging/recipe/recipe.js';
import { VERSION } from '../version.js';
import { paramsSchema, type ParamSpecs } from './param-spec.js';
import type { JsonSchema, Plugin, PluginRegistry, PluginType } from './plugin-registry.js';

const EXPORTER_TITLES: Record<ExportFormat, string> = {
  coco: 'COCO JSON (one file, each image with its split)',
  coco_zip: 'COCO JSON per split with the images (zip)',
  yolo: 'YOLO: data.yaml, images/ and labels/ per split (zip)',
  jsonl: 'JSON lines, one image per line',
  csv: 'CSV, one annotation per row',
  voc: 'Pascal VOC XML with the images (zip)',
  masks: 'PNG class-index masks (zip)',
  folders: 'A folder per class (zip, classification)',
  yolo_ultralytics: 'Ultralytics YOLO: a data.yaml that `yolo train` reads as is (zip)',
  cvat: 'CVAT for images 1.1 XML with the images (zip)',
  datumaro: 'Datumaro 1.0 JSON with the images (zip)',
  labelme: 'LabelMe JSON per image with the images (zip)',
  createml: 'CreateML JSON with the images (zip)',
  dota: 'DOTA oriented boxes: images/ and labelTxt/ per split (zip)',
  labelstudio: 'Label Studio JSON tasks with the images (zip)',
  multilabel_csv: 'Multi-label classification CSV (_classes.csv per split, one-hot) with the images (zip)',
  cvat_video: 'CVAT for video 1.1: tracks with keyframes and the frames (zip)',
  mot: 'MOT 1.1: gt/gt.txt, gt/labels.txt, seqinfo.ini and img1/ per video (zip)',
};

const ImporterParams = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Name of the new project (default: the archive name)' })),
    project_type: Type.Optional(Type.String({ description: 'Project type (detected from the annotations when absent)' })),
  },
  { additionalProperties: false },
);

const ExporterParams = Type.Object(
  {
    version_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Export a dataset version instead of the live project' })),
    include_unannotated: Type.Optional(Type.Boolean({ default: true, description: 'Whether images without annotations are exported' })),
  },
  { additionalProperties: false },
);

const DetectorParams = Type.Object(
  {
    confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.25, description: 'Detections scored lower are dropped' })),
    iou: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.45, description: 'Overlap above which NMS drops the lower-scored box of a class' })),
  },
  { additionalProperties: false },
);

const SamParams = Type.Object(
  {
    annotation_type: Type.Optional(Type.Union([Type.Literal('polygon'), Type.Literal('mask')], { default: 'polygon' })),
  },
  { additionalProperties: false },
);

/** A TypeBox object's top-level options, each as its own plugin (preprocessing and augmentation steps). */
function optionPlugins(type: PluginType, config: { properties: Record<string, TSchema> }, what: string): Plugin[] {
  return Object.entries(config.properties).map(([name, schema]) => {
    const json = schema as unknown as JsonSchema;
    const params: JsonSchema = json.type === 'object' ? json : { type: 'object', properties: { value: json }, additionalProperties: false };
    return builtin(type, name, titleOf(name), String(json.description ?? `${what} option "${name}"`), params);
  });
}

function builtin(type: PluginType, name: string, title: string, description: string, schema: TSchema | JsonSchema): Plugin {
  return { type, name, title, description, version: VERSION, builtin: true, config_schema: structuredClone(schema) as JsonSchema };
}

function titleOf(name: string): string {
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * Versa's own catalogs as plugins: dataset readers and writers, the version pipeline's preprocessing and
 * augmentation options (the same schemas as `GET /api/pipeline/defaults`), and the ONNX model runtimes. The quality
 * checks, cleaning actions and training adapters come from their modules (registerCatalogPlugins).
 */
export function builtinPlugins(): Plugin[] {
  return [
    ...READABLE_FORMATS.map((f) => builtin('importer', f, f, `Reads ${FORMAT_DESCRIPTIONS[f]} (archive or folder) into a new project`, ImporterParams)),
    ...(Object.keys(WRITERS) as ExportFormat[]).map((f) =>
      builtin('exporter', f, EXPORTER_TITLES[f], `Writes a project or dataset version as ${EXPORTER_TITLES[f]}`, ExporterParams)),
    ...optionPlugins('preprocessing', PreprocessingConfig as unknown as { properties: Record<string, TSchema> }, 'Preprocessing'),
    ...optionPlugins('augmentation', AugmentationConfig as unknown as { properties: Record<string, TSchema> }, 'Augmentation'),
    builtin('detector', 'yolo-detect', 'YOLO detector (ONNX)', 'Ultralytics YOLOv5/v8/v10/v11 detection exports, run with onnxruntime on the batch inference pool', DetectorParams),
    builtin('detector', 'yolo-segment', 'YOLO segmenter (ONNX)', 'YOLOv8/v11/YOLO26 segmentation exports: boxes and mask prototypes turned into polygons', DetectorParams),
    builtin('detector', 'sam', 'Segment Anything (ONNX encoder + decoder)', 'SAM, MobileSAM or EfficientSAM exports: masks from point or box prompts; embeddings cached', SamParams),
  ];
}

export function registerBuiltinPlugins(registry: PluginRegistry): void {
  for (const plugin of builtinPlugins()) registry.register(plugin);
}

/** An entry of the quality, cleaning and training catalogs: a name, what it is, and its parameters. */
export interface CatalogEntry {
  name: string;
  title: string;
  description: string;
  params: ParamSpecs;
}

/** Quality checks, cleaning actions and training adapters, registered from their modules' catalogs (composition root). */
export function registerCatalogPlugins(registry: PluginRegistry, catalogs: { checks: CatalogEntry[]; actions: CatalogEntry[]; adapters: CatalogEntry[] }): void {
  for (const [type, entries] of [['quality_check', catalogs.checks], ['cleaning_action', catalogs.actions], ['training_adapter', catalogs.adapters]] as const) {
    for (const e of entries) registry.register(builtin(type, e.name, e.title, e.description, paramsSchema(e.params)));
  }
}
