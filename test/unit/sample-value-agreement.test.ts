/**
 * Agreement among annotators on sample values (issue 29) against references worked out by hand from Krippendorff's
 * definitions (arithmetic in the comments) and his published example: interval alpha of numbers and ratings, nominal
 * alpha of preferences (a tie a third value), Jaccard-distance alpha of class sets, and the mean pairwise 1 − WER of
 * transcripts; per project and per annotator, with missing values, a single annotator (null) and full agreement (1).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interval, krippendorff, krippendorffAlpha } from '../../src/modules/quality-control/label-agreement.logic.js';
import { transcriptAgreement, valueAgreement, type ValueAnswer } from '../../src/modules/quality-control/sample-value-agreement.logic.js';
import { sampleReport, sampleScoresCsv, type SampleVersion } from '../../src/modules/quality-control/sample-report.logic.js';
import type { SampleValue } from '../../src/modules/quality-control/sample-value-scores.logic.js';

const close = (actual: number | null | undefined, expected: number, tolerance = 1e-12) =>
  assert.ok(typeof actual === 'number' && Math.abs(actual - expected) < tolerance, `${actual} ≠ ${expected}`);
const a = (user_id: number, value: SampleValue, labels: string[] = []): ValueAnswer => ({ user_id, labels, value });

describe('agreement on sample values (issue 29)', () => {
  it('interval alpha matches the published example (Krippendorff 2011, 4 coders × 12 units: interval 0.849)', () => {
    const _ = null;
    const coders = [
      [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
      [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
      [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
      [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
    ];
    close(krippendorffAlpha(coders[0].map((_v, u) => coders.map((c) => c[u])), interval), 0.849, 5e-4);
  });

  it("interval alpha's one-pass expected disagreement equals the sum over every pair", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const units = Array.from({ length: 60 }, () => Array.from({ length: 3 }, () => (random() < 0.2 ? null : Math.round(random() * 1000) / 10 + 1e6)));
    const pairwise = (a: number, b: number) => (a - b) ** 2;
    close(krippendorffAlpha(units, interval), krippendorffAlpha(units, pairwise)!, 1e-9);
  });

  it('numbers: interval alpha per project and per annotator, a missing value left out', () => {
    // Units [1,2] [3,3] [4,–]: the last is not pairable. n 4; observed (1 + 1)/1 = 2; expected over ordered pairs of
    // values: 2·(1 + 4 + 4 + 1 + 1) = 22 → 1 − 3·2/22 = 8/11. Each of the two users: D_o (1 + 0)/2 → 1 − ½·12/22 = 8/11.
    const { project, annotators } = valueAgreement([[a(1, 1), a(2, 2)], [a(1, 3), a(2, 3)], [a(1, 4), a(2, null)]]);
    close(project.value_alpha, 8 / 11);
    close(annotators.get(1)!.value_alpha, 8 / 11);
    close(annotators.get(2)!.value_alpha, 8 / 11);
    assert.equal(project.rating_alpha, null);
    assert.equal(project.preference_alpha, null);
    assert.equal(project.transcript_agreement, null);
    assert.equal(project.label_set_alpha, null);
  });

  it('preferences: nominal alpha with a tie as a third value, each annotator against the others', () => {
    // Units [chosen, chosen, tie] [rejected ×3]: n 6, expected 6² − (2² + 1² + 3²) = 22. Observed: in the first unit
    // users 1 and 2 each ½ (one of two others differs), user 3 2/2 → 2 → 1 − 5·2/22 = 6/11. Per user, D_o over their
    // two units: users 1, 2 ¼ → 1 − ¼·30/22 = 29/44; user 3 ½ → 1 − ½·30/22 = 7/22 (weighted mean 6/11).
    const { project, annotators } = valueAgreement([
      [a(1, { preference: 'chosen' }), a(2, { preference: 'chosen' }), a(3, { preference: 'tie' })],
      [a(1, { preference: 'rejected' }), a(2, { preference: 'rejected' }), a(3, { preference: 'rejected' })],
    ]);
    close(project.preference_alpha, 6 / 11);
    close(annotators.get(1)!.preference_alpha, 29 / 44);
    close(annotators.get(2)!.preference_alpha, 29 / 44);
    close(annotators.get(3)!.preference_alpha, 7 / 22);
  });

  it('ratings: interval alpha; all agreeing is 1, whatever the values', () => {
    const { project, annotators } = valueAgreement([[a(1, { rating: 3 }), a(2, { rating: 3 })], [a(1, { rating: 8, preference: 'tie' }), a(2, { rating: 8, preference: 'tie' })]]);
    assert.equal(project.rating_alpha, 1);
    assert.equal(annotators.get(2)!.rating_alpha, 1);
    // Every value the same: no disagreement expected either (0/0), reported as full agreement.
    assert.equal(project.preference_alpha, 1);
  });

  it('class sets: alpha with the Jaccard distance, order and repeats ignored, only where an answer is multi-label', () => {
    // Units [{a,b}, {a}] [{c}, {c}] [{}, {c}] (no class: missing). δ({a,b},{a}) = ½, δ(·,{c}) = 1. n 4, observed 2·½ = 1,
    // expected 2·(½ + 2·1 + 2·1) = 9 → 1 − 3·1/9 = 2/3.
    const { project } = valueAgreement([[a(1, null, ['b', 'a', 'b']), a(2, null, ['a'])], [a(1, null, ['c']), a(2, null, ['c'])], [a(1, null, []), a(2, null, ['c'])]]);
    close(project.label_set_alpha, 2 / 3);
    // Single classes only: the sets are classes, class_alpha says it already.
    assert.equal(valueAgreement([[a(1, null, ['a']), a(2, null, ['b'])]]).project.label_set_alpha, null);
  });

  it('transcripts: mean over pairs of 1 − symmetric WER', () => {
    // "the cat sat" / "the cat sat down": 1 insertion over the longer's 4 words → ¾, either way round.
    close(transcriptAgreement('the cat sat', 'the cat sat down'), 0.75);
    close(transcriptAgreement('the cat sat down', 'the cat sat'), 0.75);
    assert.equal(transcriptAgreement('Hello, world!', 'hello world'), 1);
    assert.equal(transcriptAgreement('', ''), 1);
    assert.equal(transcriptAgreement('hello world', 'goodbye'), 0);
    // Pairs: (1,2) ¾ on clip 1; (1,2) 1, (1,3) 0, (2,3) 0 on clip 2 → 1.75/4; user 1: 1.75/3; user 3: 0.
    const { project, annotators } = valueAgreement([
      [a(1, 'the cat sat'), a(2, 'the cat sat down'), a(3, null)],
      [a(1, 'hello world'), a(2, 'Hello, world!'), a(3, 'goodbye')],
    ]);
    close(project.transcript_agreement, 1.75 / 4);
    close(annotators.get(1)!.transcript_agreement, 1.75 / 3);
    close(annotators.get(3)!.transcript_agreement, 0);
  });

  it('a single annotator, or nothing pairable, gives no figure (null)', () => {
    const { project, annotators } = valueAgreement([[a(1, 4)], [a(1, { rating: 2, preference: 'chosen' })], [a(1, 'words')]]);
    assert.deepEqual(project, { label_set_alpha: null, value_alpha: null, rating_alpha: null, preference_alpha: null, transcript_agreement: null });
    assert.deepEqual(annotators.get(1), project);
    assert.deepEqual(krippendorff([[[1, 5], [2, null]]], interval), { alpha: null, coders: new Map([[1, null], [2, null]]) });
  });

  it('the samples report carries the figures per project and per annotator, and its CSV their columns', () => {
    const v = (sample_id: number, user_id: number, value: SampleValue, label: string | null = null): SampleVersion => ({ sample_id, user_id, label, spans: null, value });
    // Classes [x,x] [x,y]: n 4 (x 3, y 1), observed 2, expected 2·3 = 6 → 1 − 3·2/6 = 0; numbers [1,2] [3,3] → 8/11.
    const report = sampleReport([v(1, 1, 1, 'x'), v(1, 2, 2, 'x'), v(2, 1, 3, 'x'), v(2, 2, 3, 'y'), v(3, 1, 9)], new Map(), new Map());
    close(report.value_alpha, 8 / 11);
    close(report.class_alpha, 0);
    assert.deepEqual(report.annotators.map((r) => [r.user_id, r.class_alpha, r.value_alpha]), [[1, 0, 8 / 11], [2, 0, 8 / 11]]);
    const csv = sampleScoresCsv(report.annotators.map((r) => ({ ...r, email: `u${r.user_id}@x` }))).split('\n');
    assert.ok(csv[0].endsWith(',class_alpha,label_set_alpha,value_alpha,rating_alpha,preference_alpha,transcript_agreement'), csv[0]);
    assert.ok(csv[1].startsWith('1,u1@x,'), csv[1]);
    assert.ok(csv[1].endsWith(',0,,0.727273,,,'), csv[1]); // six decimals, as every score in the CSV
  });
});
