import { api } from '../api.js';
import type { ResponseOf } from '../types.js';

export type PipelineDefinition = ResponseOf<'/api/pipelines/example', 'get'>;

/** A starting point the "New pipeline" menu offers, and whether it validates on the project (why not, when not). */
export interface PipelineStart {
  key: string;
  title: string;
  definition: PipelineDefinition;
  problem: string | null;
}

/** One select step: the smallest definition that validates, to build on. */
const BLANK: PipelineDefinition = { name: 'New pipeline', description: '', steps: [{ id: 'select', type: 'select_images', params: {} }] };

/** Examples beside the server's protective-equipment one: each uses only what most projects have. */
const EXAMPLES: PipelineDefinition[] = [
  {
    name: 'Quality check of unreviewed images',
    description: 'Runs the quality checks over the images nobody has reviewed yet.',
    steps: [
      { id: 'select', type: 'select_images', params: { review_states: ['unreviewed'] } },
      { id: 'quality', type: 'quality', needs: ['select'], params: {} },
    ],
  },
  {
    name: 'Export annotated images',
    description: 'Writes the annotated images (and only those) as COCO JSON.',
    steps: [
      { id: 'select', type: 'select_images', params: { annotated: true } },
      { id: 'export', type: 'export', needs: ['select'], params: { format: 'coco' } },
    ],
  },
  {
    name: 'Pre-label unannotated images',
    description: "Runs the project's detector over the images without annotations and writes what it finds.",
    steps: [
      { id: 'select', type: 'select_images', params: { annotated: false } },
      { id: 'detect', type: 'detect', needs: ['select'], params: { confidence: 0.25 } },
      { id: 'write', type: 'write_annotations', needs: ['detect'], params: {} },
    ],
  },
];

/** The blank definition and the examples, each checked against the project (an example that would not run says why). */
export async function pipelineStarts(projectId: number): Promise<PipelineStart[]> {
  const ppe = await api.get('/api/pipelines/example');
  const examples = [ppe, ...EXAMPLES];
  const checked = await Promise.all(
    examples.map(async (definition) => {
      const { errors } = await api.post('/api/pipelines/validate', { query: { project_id: projectId }, body: definition });
      return errors.length === 0 ? null : `${errors[0].path ? `${errors[0].path}: ` : ''}${errors[0].message}`;
    }),
  );
  return [
    { key: 'blank', title: 'Blank (one select step)', definition: BLANK, problem: null },
    ...examples.map((definition, i) => ({ key: `example-${i}`, title: definition.name, definition, problem: checked[i] })),
  ];
}
