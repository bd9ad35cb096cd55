import type { ParamSpec as AnyParamSpec } from '../plugins/param-spec.js';
import type { PythonProbe } from './python.js';

/** A training parameter: its default is a scalar or null. */
export type ParamSpec = AnyParamSpec<number | string | boolean | null>;

export interface AdapterSpec {
  name: string;
  title: string;
  /** Project types (images) or sample tasks (tabular) it trains. */
  tasks: string[];
  modality: 'image' | 'tabular';
  /** The entry point under trainer/. */
  script: string;
  /** The models it can build; `pattern` instead for adapters whose model names are open-ended. */
  models: string[];
  modelPattern?: RegExp;
  defaultModel: string;
  /** What the registered model does, for the model registry; null: runs register nothing. */
  modelTask: 'detect' | 'segment' | 'classify' | 'tabular' | null;
  /** The artifact of the trainer's final event that is registered as the model (`onnx` unless said). */
  modelArtifact?: string;
  params: Record<string, ParamSpec>;
  /** Why it cannot run with this interpreter, or null when it can. */
  unavailable(probe: PythonProbe): string | null;
}

const torchMissing = (probe: PythonProbe): string | null => {
  if (probe.error) return `${probe.error}. Set PYTHON to an interpreter with PyTorch, or install it: apt-get install -y python3-torch python3-torchvision`;
  if (!probe.torch || !probe.torchvision) {
    return `PyTorch is not installed for ${probe.python ? `Python ${probe.python}` : 'this interpreter'}: apt-get install -y python3-torch python3-torchvision (or pip install torch torchvision), or point PYTHON at an interpreter that has it`;
  }
  if (!probe.numpy || !probe.PIL) return 'numpy and Pillow are missing: apt-get install -y python3-numpy python3-pil';
  return null;
};

/**
 * The training parameters, defined here once: the adapters' catalog (GET /api/training/adapters) shows them, the
 * train requests' schemas take their ranges (src/modules/training/training.schemas.ts), and the trainers read their
 * defaults from trainer/versa_trainer/contract.json, generated from this file (scripts/trainer-contract.ts).
 */
const IMAGE_PARAMS = {
  epochs: { type: 'integer', min: 1, max: 1000, description: 'Passes over the training split' },
  imgsz: { type: 'integer', min: 32, max: 1280, multipleOf: 32, description: 'Square input size in pixels (a multiple of 32); images are letterboxed' },
  batch: { type: 'integer', min: 1, max: 256, description: 'Images per optimisation step' },
  seed: { type: 'integer', default: 0, min: 0, max: 2_147_483_647, description: 'Same seed on CPU, same metrics' },
  time_budget_s: { type: 'integer', default: null, min: 1, max: 604_800, description: 'Stop after this many seconds (the learning-rate schedule follows the budget)' },
} as const satisfies Record<string, Omit<ParamSpec, 'default'> & { default?: number | null }>;

export const TABULAR_PARAMS = {
  epochs: { type: 'integer', default: 100, min: 1, max: 5000, description: 'Boosting iterations' },
  lr: { type: 'number', default: 0.1, min: 0.001, max: 1, description: 'Learning rate (shrinkage of each tree)' },
  max_depth: { type: 'integer', default: null, min: 1, max: 64, description: 'Depth limit of each tree; none when null' },
  seed: { type: 'integer', default: 0, min: 0, max: 2_147_483_647, description: 'Random state' },
} as const satisfies Record<string, ParamSpec>;

/** The image parameters' ranges (every image adapter has the same); their defaults are each adapter's. */
export const IMAGE_PARAM_RANGES: { readonly [K in keyof typeof IMAGE_PARAMS]: Omit<ParamSpec, 'default'> } = IMAGE_PARAMS;

const imageParams = (epochs: number, imgsz: number, batch: number): Record<string, ParamSpec> => ({
  epochs: { ...IMAGE_PARAMS.epochs, default: epochs },
  imgsz: { ...IMAGE_PARAMS.imgsz, default: imgsz },
  batch: { ...IMAGE_PARAMS.batch, default: batch },
  seed: IMAGE_PARAMS.seed,
  time_budget_s: IMAGE_PARAMS.time_budget_s,
});

export const ADAPTERS: readonly AdapterSpec[] = [
  {
    name: 'versa-detect',
    title: 'Versa detector (anchor-free, from scratch)',
    tasks: ['object_detection', 'instance_segmentation'],
    modality: 'image',
    script: 'versa_detect.py',
    models: ['versa-detect-n', 'versa-detect-s', 'versa-detect-m'],
    defaultModel: 'versa-detect-s',
    modelTask: 'detect',
    params: imageParams(30, 320, 16),
    unavailable: torchMissing,
  },
  {
    name: 'versa-classify',
    title: 'MobileNetV3 classifier (from scratch)',
    tasks: ['classification'],
    modality: 'image',
    script: 'versa_classify.py',
    models: ['mobilenet_v3_small', 'mobilenet_v3_large'],
    defaultModel: 'mobilenet_v3_small',
    modelTask: 'classify',
    params: imageParams(20, 128, 32),
    unavailable: torchMissing,
  },
  {
    name: 'versa-segment',
    title: 'Versa segmentation (U-Net class maps, from scratch; instances are connected regions)',
    tasks: ['semantic_segmentation', 'instance_segmentation'],
    modality: 'image',
    script: 'versa_segment.py',
    models: ['unet-n', 'unet-s', 'unet-m'],
    defaultModel: 'unet-s',
    modelTask: 'segment',
    params: imageParams(40, 256, 8),
    unavailable: torchMissing,
  },
  {
    name: 'tabular',
    title: 'Gradient boosting on tables (scikit-learn)',
    tasks: ['tabular-classification', 'tabular-regression'],
    modality: 'tabular',
    script: 'versa_tabular.py',
    models: ['hist-gradient-boosting'],
    defaultModel: 'hist-gradient-boosting',
    modelTask: 'tabular',
    modelArtifact: 'model',
    params: TABULAR_PARAMS,
    unavailable: (probe) =>
      probe.error ? `${probe.error}. Set PYTHON to an interpreter with scikit-learn` : !probe.sklearn || !probe.numpy ? 'scikit-learn is not installed: apt-get install -y python3-sklearn' : null,
  },
  {
    name: 'ultralytics',
    title: 'Ultralytics YOLO (the `yolo` command line)',
    tasks: ['object_detection', 'instance_segmentation', 'classification'],
    modality: 'image',
    script: 'versa_ultralytics.py',
    models: [],
    modelPattern: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\.(yaml|pt)$/,
    defaultModel: 'yolov8n.yaml',
    modelTask: null,
    params: imageParams(50, 640, 16),
    unavailable: (probe) =>
      probe.yolo ? null : 'The `yolo` command is not installed (pip install ultralytics); Versa never downloads weights, so start from a model .yaml or a local .pt',
  },
];

export function adapterNamed(name: string): AdapterSpec | undefined {
  return ADAPTERS.find((a) => a.name === name);
}

/** The adapter a project type trains with when the request names none. */
export function defaultAdapterFor(projectType: string): AdapterSpec | undefined {
  return ADAPTERS.find((a) => a.tasks.includes(projectType) && a.name !== 'ultralytics');
}
