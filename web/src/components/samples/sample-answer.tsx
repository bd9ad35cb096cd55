import type { LabelClass, Sample, SamplePatch } from '../../types.js';
import { SampleAudio } from './sample-audio.js';
import { SampleLlm } from './sample-llm.js';
import { SampleTable, useRegression } from './sample-table.js';
import { SampleText } from './sample-text.js';
import { SampleVideo } from './sample-video.js';

/**
 * A sample with an answer on it (its classes, spans and value: a quality-control task's, never the sample's own) in
 * its modality's control, the one the lead's page uses: text with its spans, audio and video with segments, an LLM
 * record, a tabular row (a class, or a number when the project's tabular target is a number, as the server declares
 * it). Several classes in a multi-label project. Read-only without `save`.
 */
export function SampleAnswer({ projectId, sample, classes, multiLabel, save, onError }: { projectId: number; sample: Sample; classes: LabelClass[]; multiLabel: boolean; save?: (patch: SamplePatch) => void; onError: (message: string) => void }) {
  const tabular = sample.modality === 'tabular';
  const regression = useRegression(projectId, tabular, onError);
  const own = classes.filter((c) => !c.modalities || c.modalities.includes(sample.modality));
  const view = { sample, classes: own, readOnly: !save, multiLabel, save: save ?? (() => undefined) };
  return (
    <>
      {sample.modality === 'text' && <SampleText key={sample.id} {...view} />}
      {sample.modality === 'audio' && <SampleAudio key={sample.id} {...view} />}
      {sample.modality === 'video' && <SampleVideo key={sample.id} {...view} />}
      {sample.modality === 'llm' && <SampleLlm key={sample.id} {...view} />}
      {tabular && regression !== undefined && (
        <SampleTable key={sample.id} rows={[sample]} total={1} classes={own} readOnly={view.readOnly} regression={regression} onChange={(_, patch) => view.save(patch)} onNearEnd={() => undefined} />
      )}
    </>
  );
}
