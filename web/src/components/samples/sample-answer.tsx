import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { LabelClass, Sample, SamplePatch } from '../../types.js';
import { SampleAudio } from './sample-audio.js';
import { SampleLlm } from './sample-llm.js';
import { isRegression, SampleTable } from './sample-table.js';
import { SampleText } from './sample-text.js';
import { SampleVideo } from './sample-video.js';

/**
 * A sample with an answer on it (its classes, spans and value: a quality-control task's, never the sample's own) in
 * its modality's control, the one the lead's page uses: text with its spans, audio and video with segments, an LLM
 * record, a tabular row (a class, or a number when the project's tabular rows hold numbers, as the lead's table
 * decides). Read-only without `save`.
 */
export function SampleAnswer({ projectId, sample, classes, save, onError }: { projectId: number; sample: Sample; classes: LabelClass[]; save?: (patch: SamplePatch) => void; onError: (message: string) => void }) {
  const [regression, setRegression] = useState<boolean>();
  const tabular = sample.modality === 'tabular';
  useEffect(() => {
    if (tabular && regression === undefined) {
      api.get('/api/projects/{id}/samples', { path: { id: projectId }, query: { modality: 'tabular', limit: 200 } }).then((rows) => setRegression(isRegression(rows)), (e) => onError((e as Error).message));
    }
  }, [tabular]);
  const own = classes.filter((c) => !c.modalities || c.modalities.includes(sample.modality));
  const view = { sample, classes: own, readOnly: !save, save: save ?? (() => undefined) };
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
