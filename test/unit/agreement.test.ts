/**
 * Labelling quality control's figures (issue 29) against references worked out by hand from the definitions (the
 * arithmetic is in the comments), on small cases: empty images, unmatched objects, ties, missing values; and the
 * consensus of three annotators who each perturb the truth differently.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { imageAgreement, mergeConsensus } from '../../src/modules/quality-control/consensus.logic.js';
import { accuracy, krippendorffAlpha, spanAlpha, spanTokenF1 } from '../../src/modules/quality-control/label-agreement.logic.js';
import { addScores, matchShapes, scoreShapes, type Shape } from '../../src/modules/quality-control/shape-scores.logic.js';
import { teamReport } from '../../src/modules/quality-control/quality-report.logic.js';
import { Random } from '../../src/lib/random.js';

const box = (class_id: number, x: number, y: number, width = 10, height = 10): Shape => ({ class_id, annotation_type: 'bbox', geometry: { x, y, width, height } });
const close = (actual: number | null, expected: number, eps = 1e-9) => {
  assert.ok(actual !== null && Math.abs(actual - expected) < eps, `${actual} ≠ ${expected}`);
};

describe('shape scoring against a reference (issue 29)', () => {
  it('scores matched, wrong-class and unmatched objects per class and overall', () => {
    const ref = [box(1, 0, 0), box(2, 20, 0)];
    // a0 = ref0 exactly (IoU 1); a1 sits on ref1 shifted 1 px (IoU 90/110) with the wrong class; a2 matches nothing.
    const ann = [box(1, 0, 0), box(1, 21, 0), box(2, 50, 50, 5, 5)];
    const s = scoreShapes(ref, ann);
    // class 1: TP 1 (ref0–a0), FP 1 (a1), FN 0 → P 1/2, R 1, F1 2/3; class 2: TP 0, FP 1 (a2), FN 1 (ref1) → 0, 0, 0.
    assert.deepEqual(s.per_class.map((c) => [c.class_id, c.tp, c.fp, c.fn]), [[1, 1, 1, 0], [2, 0, 1, 1]]);
    close(s.per_class[0].precision, 0.5);
    close(s.per_class[0].recall, 1);
    close(s.per_class[0].f1, 2 / 3);
    assert.deepEqual([s.per_class[1].precision, s.per_class[1].recall, s.per_class[1].f1], [0, 0, 0]);
    // overall: TP 1, FP 2, FN 1 → P 1/3, R 1/2, F1 2/5; pairs: 2, mean IoU (1 + 9/11)/2 = 10/11, class accuracy 1/2.
    close(s.precision, 1 / 3);
    close(s.recall, 1 / 2);
    close(s.f1, 0.4);
    assert.equal(s.matched, 2);
    close(s.mean_iou, 10 / 11);
    close(s.class_accuracy, 0.5);
  });

  it('an empty image labelled empty is right; either side alone is wrong', () => {
    const both = scoreShapes([], []);
    assert.deepEqual([both.f1, both.precision, both.recall, both.mean_iou, both.class_accuracy, both.per_class], [1, null, null, null, null, []]);
    const extra = scoreShapes([], [box(3, 0, 0)]);
    assert.deepEqual([extra.f1, extra.precision, extra.recall, extra.fp], [0, 0, null, 1]);
    const missed = scoreShapes([box(3, 0, 0)], []);
    assert.deepEqual([missed.f1, missed.precision, missed.recall, missed.fn], [0, null, 0, 1]);
  });

  it('does not match below IoU 0.5', () => {
    // IoU of [0,10] and [5,15] (same height): 50/150 = 1/3.
    const s = scoreShapes([box(1, 0, 0)], [box(1, 5, 0)]);
    assert.deepEqual([s.tp, s.fp, s.fn, s.matched, s.mean_iou], [0, 1, 1, 0, null]);
    // Exactly 0.5 matches: a 10×10 box inside a 10×20 one, 100/200.
    assert.equal(scoreShapes([box(1, 0, 0)], [box(1, 0, 0, 10, 20)]).tp, 1);
  });

  it('matches optimally (Hungarian), where greedy would lose a pair', () => {
    // R1 [0,10], R2 [3,13]; A1 [0.5,10.5]: IoU 9.5/10.5 = 0.905 with R1, 7.5/12.5 = 0.6 with R2; A2 [-2,8]: 8/12 = 0.667
    // with R1, 5/15 with R2. Greedy takes R1–A1 first and leaves R2 alone; the optimum pairs R1–A2 and R2–A1.
    const pairs = matchShapes([box(1, 0, 0), box(1, 3, 0)], [box(1, 0.5, 0), box(1, -2, 0)]);
    assert.deepEqual(pairs.map((p) => [p.ref, p.ann]), [[0, 1], [1, 0]]);
    close(pairs[0].iou, 8 / 12);
    close(pairs[1].iou, 0.6);
  });

  it('breaks a tie in IoU in favour of the agreeing class, whatever the order', () => {
    // Both annotations overlap the reference by 9/11; one has its class.
    for (const ann of [[box(2, 1, 0), box(1, -1, 0)], [box(1, -1, 0), box(2, 1, 0)]]) {
      const s = scoreShapes([box(1, 0, 0)], ann);
      assert.deepEqual([s.tp, s.fp, s.fn, s.class_accuracy], [1, 1, 0, 1]);
    }
  });

  it('matches polygons against boxes by area', () => {
    const square = { class_id: 1, annotation_type: 'polygon', geometry: { points: [[0, 0], [10, 0], [10, 10], [0, 10]] } };
    const s = scoreShapes([square], [box(1, 0, 0, 10, 5)]);
    assert.equal(s.tp, 1);
    close(s.mean_iou, 0.5, 1e-3);
  });

  it('adds images: counts and pairs add up, ratios are recomputed', () => {
    const a = scoreShapes([box(1, 0, 0)], [box(1, 0, 0)]);
    const b = scoreShapes([box(1, 0, 0), box(2, 30, 0)], []);
    const sum = addScores([a, b]);
    // TP 1, FN 2 → F1 2/4; one pair of IoU 1.
    assert.deepEqual([sum.tp, sum.fp, sum.fn, sum.f1, sum.recall, sum.mean_iou], [1, 0, 2, 0.5, 1 / 3, 1]);
  });
});

describe('labels: accuracy, token F1 and Krippendorff alpha (issue 29)', () => {
  it('accuracy skips items missing on either side', () => {
    close(accuracy(['a', 'b', 'c', null], ['a', 'c', 'c', 'a']), 2 / 3);
    assert.equal(accuracy([null], ['a']), null);
  });

  it('token-level F1 of text spans', () => {
    const text = 'John lives in New York City';
    const ref = [{ start: 0, end: 4, label: 'PER' }, { start: 14, end: 27, label: 'LOC' }];
    const ann = [{ start: 0, end: 4, label: 'PER' }, { start: 14, end: 22, label: 'LOC' }, { start: 5, end: 10, label: 'ORG' }];
    // tokens ref: PER O O LOC LOC LOC; ann: PER ORG O LOC LOC O → TP 3, FP 1 (lives), FN 1 (City): F1 6/8.
    close(spanTokenF1(text, ref, ann), 0.75);
    // A wrong label on a token is both a false positive and a false negative: TP 0, FP 1, FN 1.
    close(spanTokenF1('John', [{ start: 0, end: 4, label: 'PER' }], [{ start: 0, end: 4, label: 'LOC' }]), 0);
    assert.equal(spanTokenF1('nothing here', [], []), 1);
    assert.equal(spanTokenF1('', [], []), 1);
  });

  it('Krippendorff alpha, nominal, on hand-worked cases', () => {
    // Units [a,a], [a,b], [b,b]: o_aa 2, o_ab = o_ba 1, o_bb 2; n_a = n_b = 3, n 6 → 1 − 5·2/(2·3·3) = 4/9.
    close(krippendorffAlpha([['a', 'a'], ['a', 'b'], ['b', 'b']]), 4 / 9);
    // Three coders with gaps: [a,a,a] gives o_aa 3·2/2 = 3, [a,b,–] o_ab = o_ba 1, [b,b,b] o_bb 3, [a,–,–] is not
    // pairable; n_a = n_b = 4, n 8 → 1 − 7·2/(2·4·4) = 18/32.
    close(krippendorffAlpha([['a', 'a', 'a'], ['a', 'b', null], ['b', 'b', 'b'], ['a', null, null]]), 18 / 32);
    assert.equal(krippendorffAlpha([['a', 'a'], ['a', 'a']]), 1);
    assert.equal(krippendorffAlpha([['a', null], [null, 'b']]), null);
    assert.equal(krippendorffAlpha([]), null);
  });

  it("Krippendorff alpha matches the published example (Krippendorff 2011, 4 coders × 12 units: nominal 0.743)", () => {
    const _ = null;
    const coders = [
      ['1', '2', '3', '3', '2', '1', '4', '1', '2', _, _, _],
      ['1', '2', '3', '3', '2', '2', '4', '1', '2', '5', _, '3'],
      [_, '3', '3', '3', '2', '3', '4', '2', '2', '5', '1', _],
      ['1', '2', '3', '3', '2', '4', '4', '1', '2', '5', '1', _],
    ];
    const units = coders[0].map((_v, u) => coders.map((c) => c[u]));
    close(krippendorffAlpha(units), 0.743, 5e-4);
  });

  it('alpha of spans takes tokens as units', () => {
    const text = 'John lives in New York City';
    const a = [{ start: 0, end: 4, label: 'PER' }, { start: 14, end: 27, label: 'LOC' }];
    const b = [{ start: 0, end: 4, label: 'PER' }, { start: 14, end: 22, label: 'LOC' }, { start: 5, end: 10, label: 'ORG' }];
    // Units [PER,PER] [O,ORG] [O,O] [LOC,LOC] [LOC,LOC] [LOC,O]: n_PER 2, n_O 4, n_ORG 1, n_LOC 5, n 12, observed 4,
    // expected 12² − (4 + 16 + 1 + 25) = 98 → 1 − 11·4/98 = 54/98.
    close(spanAlpha(text, [a, b]), 54 / 98);
  });
});

describe('agreement and consensus among annotators (issue 29)', () => {
  it('pairwise agreement averages the pairs', () => {
    const g = imageAgreement([
      { annotator: 1, shapes: [box(1, 0, 0)] },
      { annotator: 2, shapes: [box(1, 0, 0)] },
      { annotator: 3, shapes: [] },
    ]);
    // pairs 1–2: F1 1; 1–3 and 2–3: 0 → 1/3.
    close(g.f1, 1 / 3);
    assert.equal(g.mean_iou, 1);
    assert.deepEqual(imageAgreement([{ annotator: 1, shapes: [] }, { annotator: 2, shapes: [] }]).f1, 1);
  });

  it('fuses boxes by weight, keeps weighted majorities, breaks class ties', () => {
    // IoU of [0,10] and [2,12]: 8/12; weights 1 and 3 → x = (0 + 6)/4 = 1.5, right edge (10 + 36)/4 = 11.5.
    const fused = mergeConsensus([
      { annotator: 1, weight: 1, shapes: [box(1, 0, 0)] },
      { annotator: 2, weight: 3, shapes: [box(1, 2, 0)] },
    ]);
    assert.equal(fused.length, 1);
    assert.deepEqual(fused[0].geometry, { x: 1.5, y: 0, width: 10, height: 10 });
    assert.deepEqual([fused[0].annotators, fused[0].support], [[2, 1], 1]);
    // An object one of three equal annotators drew is not a majority.
    const minority = mergeConsensus([
      { annotator: 1, shapes: [box(1, 0, 0), box(1, 50, 50)] },
      { annotator: 2, shapes: [box(1, 0, 0)] },
      { annotator: 3, shapes: [box(1, 0, 0)] },
    ]);
    assert.deepEqual(minority.map((m) => m.geometry), [{ x: 0, y: 0, width: 10, height: 10 }]);
    // ...unless that annotator outweighs the others together.
    assert.equal(mergeConsensus([
      { annotator: 1, weight: 0.9, shapes: [box(1, 0, 0), box(1, 50, 50)] },
      { annotator: 2, weight: 0.2, shapes: [box(1, 0, 0)] },
      { annotator: 3, weight: 0.2, shapes: [box(1, 0, 0)] },
    ]).length, 2);
    // Classes 7 and 3 at equal weight: the tie goes to the lower class id; at unequal weight to the heavier vote.
    assert.equal(mergeConsensus([{ annotator: 1, shapes: [box(7, 0, 0)] }, { annotator: 2, shapes: [box(3, 0, 0)] }])[0].class_id, 3);
    assert.equal(mergeConsensus([{ annotator: 1, weight: 0.9, shapes: [box(7, 0, 0)] }, { annotator: 2, weight: 0.5, shapes: [box(3, 0, 0)] }])[0].class_id, 7);
    // Two votes for 5 (weights 0.4 + 0.4) beat one heavier vote for 2 (0.7).
    assert.equal(mergeConsensus([
      { annotator: 1, weight: 0.7, shapes: [box(2, 0, 0)] },
      { annotator: 2, weight: 0.4, shapes: [box(5, 0, 0)] },
      { annotator: 3, weight: 0.4, shapes: [box(5, 0, 0)] },
    ])[0].class_id, 5);
  });

  it('picks the weighted medoid of polygons', () => {
    const poly = (dx: number): Shape => ({ class_id: 1, annotation_type: 'polygon', geometry: { points: [[dx, 0], [dx + 10, 0], [dx + 10, 10], [dx, 10]] } });
    const out = mergeConsensus([
      { annotator: 1, shapes: [poly(0)] },
      { annotator: 2, shapes: [poly(1)] },
      { annotator: 3, shapes: [poly(2)] },
    ]);
    assert.deepEqual(out[0].geometry, (poly(1).geometry));
  });

  it('three annotators who each perturb the truth differently: the consensus beats each of them', () => {
    const random = new Random(29);
    const truths: Shape[][] = [];
    const versions: Shape[][][] = [[], [], []];
    for (let image = 0; image < 40; image++) {
      const truth = Array.from({ length: random.int(3, 8) }, (_, k) => box(random.int(1, 4), k * 40 + random.int(0, 10), random.int(0, 200), random.int(12, 30), random.int(12, 30)));
      truths.push(truth);
      const g = (s: Shape) => s.geometry as { x: number; y: number; width: number; height: number };
      // Each errs on an object of its own (three distinct ones): two of three are right about every object.
      const [bad, dropped, wrong] = random.shuffle(truth.map((_, i) => i));
      // A: jitters every box a little and one of them badly (moved by its own width: IoU 0).
      versions[0].push(truth.map((s, i) => box(s.class_id, g(s).x + (i === bad ? g(s).width : random.uniform(-1.5, 1.5)), g(s).y + random.uniform(-1.5, 1.5), g(s).width, g(s).height)));
      // B: drops one object.
      versions[1].push(truth.filter((_, i) => i !== dropped));
      // C: gives one object the wrong class.
      versions[2].push(truth.map((s, i) => (i === wrong ? box(s.class_id === 4 ? 1 : s.class_id + 1, g(s).x, g(s).y, g(s).width, g(s).height) : s)));
    }
    const f1 = (labels: Shape[][]) => addScores(truths.map((t, i) => scoreShapes(t, labels[i]))).f1;
    const individual = versions.map(f1);
    const consensus = f1(truths.map((_, i) => mergeConsensus(versions.map((v, a) => ({ annotator: a + 1, shapes: v[i] })))));
    for (const score of individual) assert.ok(consensus > score, `consensus ${consensus} ≤ individual ${score}`);
    assert.equal(consensus, 1);
    assert.ok(Math.max(...individual) < 0.95);
  });
});

describe('the team report scores each pair once (issue 29)', () => {
  it('gives the same image agreement as imageAgreement and the same annotator agreement as scoring pairs directly', () => {
    const random = new Random(7);
    const versions = [];
    for (let image = 1; image <= 30; image++) {
      for (const user of [1, 2, 3]) {
        if (image % 5 === 0 && user === 3) continue; // some images with two versions
        const shapes = Array.from({ length: random.int(0, 4) }, (_, k) => box(random.int(1, 3), k * 40 + random.int(0, 8), 0, 20, 20));
        versions.push({ image_id: image, user_id: user, shapes, active_ms: 1000, submitted_at: '2026-12-02T00:00:00.000Z' });
      }
    }
    const groundTruth = new Map([[1, versions[0].shapes]]);
    const report = teamReport(versions, groundTruth, [], 0.7);
    assert.equal(report.images.length, 29);
    for (const row of report.images) {
      const direct: ReturnType<typeof imageAgreement> = imageAgreement(versions.filter((v) => v.image_id === row.image_id).map((v) => ({ annotator: v.user_id, shapes: v.shapes })));
      assert.deepEqual([row.f1, row.mean_iou, row.per_class], [direct.f1, direct.mean_iou, direct.per_class]);
      assert.equal(row.below_threshold, row.f1 < 0.7);
    }
    // Annotator 3 against the others on every overlapped image they labelled.
    let sum = 0;
    let n = 0;
    for (let image = 2; image <= 30; image++) {
      const mine = versions.find((v) => v.image_id === image && v.user_id === 3);
      if (!mine) continue;
      for (const other of versions.filter((v) => v.image_id === image && v.user_id !== 3)) {
        sum += scoreShapes(mine.shapes, other.shapes).f1;
        n++;
      }
    }
    close(report.annotators.find((a) => a.user_id === 3)!.agreement, sum / n, 1e-12);
  });
});

describe('annotator rows are people who labelled (issue 29)', () => {
  it('a submitted task or a decided review of their images gives a row; pending reviews alone do not', () => {
    const versions = [{ image_id: 1, user_id: 10, shapes: [box(1, 0, 0)], active_ms: 1000, submitted_at: '2026-12-02T00:00:00.000Z' }];
    const reviews = [
      { user_id: 11, submitted: 2, approved: 1, rejected: 1, changes: 0 },
      { user_id: 12, submitted: 3, approved: 0, rejected: 0, changes: 0 },
    ];
    const rows = teamReport(versions, new Map(), reviews, 0.7).annotators;
    assert.deepEqual(rows.map((r) => [r.user_id, r.tasks_submitted, r.reviews_decided, r.rejection_rate]), [[10, 1, 0, null], [11, 0, 2, 0.5]]);
  });
});
