import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { ResponseOf } from '../../types.js';
import { annotatorName, percent, score } from './figures.js';

type SampleReport = ResponseOf<'/api/projects/{id}/quality-control/samples/report', 'get'>;

/** Agreement among annotators beyond one class and spans: the project's figure, and each annotator's with the others. */
const AGREEMENT: { key: 'label_set_alpha' | 'value_alpha' | 'rating_alpha' | 'preference_alpha' | 'transcript_agreement'; label: string; title: string }[] = [
  { key: 'label_set_alpha', label: 'class sets', title: "Krippendorff's alpha of multi-label class sets (Jaccard distance)" },
  { key: 'value_alpha', label: 'numeric targets', title: "Krippendorff's alpha (interval) of numeric (tabular) targets" },
  { key: 'rating_alpha', label: 'ratings', title: "Krippendorff's alpha (interval) of LLM ratings" },
  { key: 'preference_alpha', label: 'preferences', title: "Krippendorff's alpha (nominal) of LLM preferences (a tie a third answer)" },
  { key: 'transcript_agreement', label: 'transcripts (1 − WER)', title: 'Mean over pairs of annotators of 1 − WER of their transcripts' },
];

/**
 * The samples' quality report (issue 29) on the Team quality page: per annotator, the accuracy of classes and the
 * token-level F1 of text spans and the F1 of audio and video time segments on ground-truth samples, and the scores of
 * multi-label classes, numeric targets, LLM ratings/preferences and transcripts (sample-value-scores.logic.ts on the
 * server), the agreement among annotators (Krippendorff's alpha; 1 − WER for transcripts) over the project and each
 * annotator's with the others (sample-value-agreement.logic.ts), and the same scores as CSV. Shown for projects that
 * hold samples.
 */
export function SampleScores({ projectId, onError }: { projectId: number; onError: (message: string) => void }) {
  const [report, setReport] = useState<SampleReport | null>(null);
  const [names, setNames] = useState<Map<number, string>>(new Map());
  const load = () => {
    api.get('/api/projects/{id}/quality-control/samples/report', { path: { id: projectId } }).then(setReport, (e) => onError((e as Error).message));
    api.get('/api/projects/{id}/members', { path: { id: projectId } }).then((ms) => setNames(new Map(ms.map((m) => [m.user_id, annotatorName(m)]))), () => undefined);
  };
  useEffect(load, [projectId]);
  return (
    <section className="card" aria-label="Samples">
      <div className="toolbar">
        <h3>Samples</h3>
        <div className="spacer" />
        <button className="ghost" onClick={load}>
          Refresh samples
        </button>
        <a className="button" href={`/api/projects/${projectId}/quality-control/samples/report/export`} download={`sample-annotators-${projectId}.csv`}>
          Export samples CSV
        </a>
      </div>
      {report === null ? (
        <p className="muted">Loading…</p>
      ) : (
        <>
          <p data-testid="sample-agreement">
            Agreement (Krippendorff's alpha): classes <span data-col="class_alpha">{score(report.class_alpha)}</span>, spans{' '}
            <span data-col="span_alpha">{score(report.span_alpha)}</span>
            {AGREEMENT.map((c) => (
              <span key={c.key} title={c.title}>
                , {c.label} <span data-col={c.key}>{score(report[c.key])}</span>
              </span>
            ))}
          </p>
          {report.annotators.length === 0 ? (
            <p className="muted">No annotator has submitted a sample yet.</p>
          ) : (
            <table className="list quality-table" data-testid="sample-table">
              <thead>
                <tr>
                  <th>Annotator</th>
                  <th title="Ground-truth samples they answered">GT samples</th>
                  <th title="Their class equal to the truth's, where both give one">Class acc.</th>
                  <th title="Token-level F1 of their text spans on ground truth">Span F1</th>
                  <th title="Span tokens: true positives / false positives / misses">TP / FP / FN</th>
                  <th title="F1 of their time segments on ground-truth clips (matched per class by IoU ≥ 0.5)">Segment F1</th>
                  <th title="Mean Jaccard index of their class sets on multi-label ground truth">Labels Jaccard</th>
                  <th title="Mean absolute error of their numeric (tabular) targets">Target MAE</th>
                  <th title="Their preferred LLM response equal to the truth's">Preference acc.</th>
                  <th title="Mean absolute difference of their LLM ratings from the truth's">Rating MAE</th>
                  <th title="Word error rate of their transcripts (0 is exact)">Transcript WER</th>
                  <th title="Task reviews decided on their answers">Reviews</th>
                  <th title="Changes requested / decided task reviews">Rejection</th>
                  <th title="Changes requested / decided task reviews">Rework</th>
                  <th title="Their Krippendorff's alpha of classes against the other annotators' on overlapped samples">Class α</th>
                  {AGREEMENT.map((c) => <th key={c.key} title={`${c.title}: theirs against the other annotators'`}>{`Agreement: ${c.label}`}</th>)}
                </tr>
              </thead>
              <tbody>
                {report.annotators.map((a) => (
                  <tr key={a.user_id} data-user={a.user_id}>
                    <td data-col="name">{names.get(a.user_id) ?? `User ${a.user_id}`}</td>
                    <td data-col="samples">{a.samples}</td>
                    <td data-col="class_accuracy">{percent(a.class_accuracy)}</td>
                    <td data-col="span_f1">{score(a.span_f1)}</td>
                    <td data-col="span_counts">{`${a.span_counts.tp} / ${a.span_counts.fp} / ${a.span_counts.fn}`}</td>
                    <td data-col="segment_f1">{score(a.segment_f1)}</td>
                    <td data-col="label_jaccard">{score(a.label_jaccard)}</td>
                    <td data-col="value_mae">{score(a.value_mae)}</td>
                    <td data-col="preference_accuracy">{percent(a.preference_accuracy)}</td>
                    <td data-col="rating_mae">{score(a.rating_mae)}</td>
                    <td data-col="transcript_wer">{score(a.transcript_wer)}</td>
                    <td data-col="reviews_decided">{a.reviews_decided}</td>
                    <td data-col="rejection_rate">{percent(a.rejection_rate)}</td>
                    <td data-col="rework_rate">{percent(a.rework_rate)}</td>
                    <td data-col="class_alpha">{score(a.class_alpha)}</td>
                    {AGREEMENT.map((c) => <td key={c.key} data-col={c.key}>{score(a[c.key])}</td>)}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
