/**
 * The samples' quality report (issue 29) against references worked out by hand from the definitions (arithmetic in
 * the comments): accuracy of classes and token-level F1 of spans against ground truth, Krippendorff's alpha of classes
 * and of token labels among annotators; with empty inputs, missing answers and ties.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sampleAnnotatorScores, sampleReport, type SampleTruth, type SampleVersion } from '../../src/modules/quality-control/sample-report.logic.js';
import { segmentCounts, segmentIou } from '../../src/modules/quality-control/segment-scores.logic.js';

const v = (sample_id: number, user_id: number, label: string | null, spans: SampleVersion['spans'] = null): SampleVersion => ({ sample_id, user_id, label, spans });
const close = (actual: number | null, expected: number) => assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${actual} ≠ ${expected}`);

describe('samples quality report (issue 29)', () => {
  it('is empty, with null figures, when nothing was answered', () => {
    assert.deepEqual(sampleReport([], new Map(), new Map()), {
      annotators: [], samples: [], class_alpha: null, span_alpha: null, label_set_alpha: null, value_alpha: null, rating_alpha: null, preference_alpha: null, transcript_agreement: null,
    });
  });

  it('scores classes by accuracy against the truth, skipping samples where either side gave none', () => {
    const truth = new Map<number, SampleTruth>([[1, { label: 'cat', spans: null, text: null }], [2, { label: 'dog', spans: null, text: null }], [3, { label: null, spans: null, text: null }]]);
    // User 1: cat = cat, cat ≠ dog, sample 3 has no reference class → 1/2. User 2: no answer on 1, dog = dog → 1/1.
    const scores = sampleAnnotatorScores([v(1, 1, 'cat'), v(2, 1, 'cat'), v(3, 1, 'cat'), v(1, 2, null), v(2, 2, 'dog'), v(9, 2, 'dog')], truth);
    assert.deepEqual(scores.map((s) => [s.user_id, s.samples, s.class_accuracy, s.span_f1]), [[1, 3, 0.5, null], [2, 2, 1, null]]);
  });

  it('scores spans by token-level F1 against the truth, micro over the texts', () => {
    const text = 'New York is big';
    const truth = new Map<number, SampleTruth>([[1, { label: null, spans: [{ start: 0, end: 8, label: 'LOC' }], text }], [2, { label: null, spans: null, text: 'nothing here' }]]);
    const versions = [
      // Tokens New, York, is, big; the truth: LOC LOC O O.
      v(1, 1, null, [{ start: 0, end: 3, label: 'LOC' }]), // LOC O O O: TP 1, FN 1 → 2/3
      v(1, 2, null, [{ start: 0, end: 8, label: 'LOC' }, { start: 12, end: 15, label: 'ADJ' }]), // TP 2, FP 1 → 4/5
      v(1, 3, null, null), // nothing: FN 2 → 0
      v(2, 1, null, null), v(2, 2, null, null), // neither side marks anything: not counted
      v(2, 3, null, [{ start: 0, end: 7, label: 'X' }]), // FP 1 on top: TP 0, FP 1, FN 2 → 0
    ];
    const scores = sampleAnnotatorScores(versions, truth);
    close(scores[0].span_f1, 2 / 3);
    close(scores[1].span_f1, 4 / 5);
    assert.deepEqual([scores[2].span_f1, scores[2].span_counts], [0, { tp: 0, fp: 1, fn: 2 }]);
  });

  it('gives the alpha of classes over the overlapped samples, ground truth and single answers left out', () => {
    // Sample 10: a, a; sample 11: a, b (a tie). Coincidences o_aa = 2, o_ab = o_ba = 1; n_a = 3, n_b = 1, n = 4;
    // alpha = 1 − (n − 1)·2 / (3·1 + 1·3) = 1 − 3·2/6 = 0.
    const report = sampleReport([v(10, 1, 'a'), v(10, 2, 'a'), v(11, 1, 'a'), v(11, 2, 'b'), v(12, 1, 'b'), v(13, 1, 'b'), v(13, 2, 'a')], new Map([[13, { label: 'a', spans: null, text: null }]]), new Map());
    assert.equal(report.class_alpha, 0);
    assert.deepEqual(report.samples.map((r) => [r.sample_id, r.annotators, r.class_unanimous, r.span_alpha]), [[10, [1, 2], true, null], [11, [1, 2], false, null]]);
    // A missing class leaves the sample unpairable; all equal is full agreement.
    const agreeing = sampleReport([v(1, 1, 'a'), v(1, 2, 'a'), v(1, 3, 'a'), v(2, 1, 'a'), v(2, 2, null)], new Map(), new Map());
    assert.equal(agreeing.class_alpha, 1);
    assert.equal(agreeing.samples[1].class_unanimous, null);
  });

  it('gives the alpha of token labels per text and over every overlapped text', () => {
    const texts = new Map([[1, 'a b'], [2, 'a b']]);
    // Text 1: both mark "a" as X: tokens (X, X), (O, O): no disagreement, alpha 1.
    // Text 2: one marks "a", the other "b": (X, O), (O, X): o_XO = o_OX = 2, n_X = n_O = 2, n = 4 → 1 − 3·4/8 = −0.5.
    const x = (start: number) => [{ start, end: start + 1, label: 'X' }];
    const report = sampleReport([v(1, 1, null, x(0)), v(1, 2, null, x(0)), v(2, 1, null, x(0)), v(2, 2, null, x(2))], new Map(), texts);
    assert.deepEqual(report.samples.map((r) => r.span_alpha), [1, -0.5]);
    // Over both texts: o_XX = 2, o_OO = 2, o_XO = o_OX = 2; n_X = n_O = 4, n = 8 → 1 − 7·4/32 = 0.125.
    close(report.span_alpha, 0.125);
  });
});

describe('time segments of audio and video scored like shapes (issue 29)', () => {
  const seg = (start_s: number, end_s: number, label: string) => ({ start_s, end_s, label });

  it('IoU of time intervals', () => {
    close(segmentIou(seg(0, 10, 'a'), seg(0, 8, 'a')), 0.8); // 8 / 10
    close(segmentIou(seg(20, 30, 'a'), seg(22, 35, 'a')), 8 / 15); // [22, 30) of [20, 35)
    assert.equal(segmentIou(seg(0, 5, 'a'), seg(5, 9, 'a')), 0); // touching is no overlap
  });

  it('matches per class one to one by IoU ≥ 0.5: TP, FP, FN and F1 per class', () => {
    const truth = [seg(0, 10, 'speech'), seg(20, 30, 'speech'), seg(40, 50, 'music')];
    const answer = [
      seg(0, 8, 'speech'), // IoU 0.8 with [0, 10): TP
      seg(22, 35, 'speech'), // IoU 8/15 ≈ 0.533 with [20, 30): TP
      seg(45, 60, 'music'), // IoU 5/20 = 0.25 with [40, 50): no match → FP, and the truth's music is a miss
      seg(0, 5, 'noise'), // no such class in the truth: FP
      seg(1, 9, 'speech'), // overlaps [0, 10) too (IoU 0.8), but that one is taken: FP
    ];
    assert.deepEqual(segmentCounts(truth, answer), [
      { label: 'music', tp: 0, fp: 1, fn: 1, f1: 0 },
      { label: 'noise', tp: 0, fp: 1, fn: 0, f1: 0 },
      { label: 'speech', tp: 2, fp: 1, fn: 0, f1: 0.8 }, // 2·2 / (2·2 + 1)
    ]);
  });

  it('a segment of the wrong class is a false positive and a miss, never a match', () => {
    assert.deepEqual(segmentCounts([seg(0, 10, 'speech')], [seg(0, 10, 'music')]).map((c) => [c.label, c.tp, c.fp, c.fn]), [['music', 0, 1, 0], ['speech', 0, 0, 1]]);
  });

  it('the report adds clips up per annotator: F1 micro over the ground-truth clips, per class', () => {
    const clip = (segments: ReturnType<typeof seg>[] | null): SampleTruth => ({ label: null, spans: null, text: null, segments });
    const truth = new Map<number, SampleTruth>([[1, clip([seg(0, 10, 'speech'), seg(40, 50, 'music')])], [2, clip([seg(0, 4, 'speech')])], [3, clip(null)]]);
    const versions: SampleVersion[] = [
      { ...v(1, 7, null), segments: [seg(0, 8, 'speech'), seg(45, 60, 'music')] }, // speech TP; music FP + FN
      { ...v(2, 7, null), segments: null }, // speech FN
      { ...v(3, 7, null), segments: [seg(1, 2, 'speech')] }, // the truth has none: speech FP
      { ...v(1, 8, null), segments: [seg(0, 10, 'speech'), seg(40, 50, 'music')] }, // both TP
    ];
    const [seven, eight] = sampleAnnotatorScores(versions, truth);
    // User 7: TP 1, FP 2, FN 2 → F1 = 2 / (2 + 2 + 2) = 1/3; speech TP 1, FP 1, FN 1 → 0.5; music TP 0, FP 1, FN 1 → 0.
    assert.deepEqual(seven.segment_counts, { tp: 1, fp: 2, fn: 2 });
    close(seven.segment_f1, 1 / 3);
    assert.deepEqual(seven.segment_per_class.map((c) => [c.label, c.tp, c.fp, c.fn, c.f1]), [['music', 0, 1, 1, 0], ['speech', 1, 1, 1, 0.5]]);
    assert.deepEqual([eight.segment_counts, eight.segment_f1, eight.span_f1], [{ tp: 2, fp: 0, fn: 0 }, 1, null]);
  });

  it('gives each annotator the task reviews\' rates, as images\' reviewRates: one with only reviews (answers back with them) too', () => {
    // User 1: 3 decided, 1 change request → 1/3 and 1/3. User 2 has no submitted answer, 2 change requests of 2 → 1, 1.
    const scores = sampleAnnotatorScores([v(1, 1, 'a'), v(2, 3, 'a')], new Map(), [{ user_id: 1, accepted: 2, changes: 1 }, { user_id: 2, accepted: 0, changes: 2 }]);
    assert.deepEqual(scores.map((s) => [s.user_id, s.samples, s.reviews_decided]), [[1, 0, 3], [2, 0, 2], [3, 0, 0]]);
    close(scores[0].rejection_rate, 1 / 3);
    close(scores[0].rework_rate, 1 / 3);
    assert.deepEqual([scores[1].rejection_rate, scores[1].rework_rate, scores[2].rejection_rate, scores[2].rework_rate], [1, 1, null, null]);
  });
});
