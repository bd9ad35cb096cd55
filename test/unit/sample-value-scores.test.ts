/**
 * The scores of sample answers beyond one class and spans (issue 29), against figures worked by hand from the
 * definitions in sample-value-scores.logic.ts: Jaccard of multi-label class sets, mean absolute error of numeric
 * targets, LLM preference agreement and rating difference, and the word error rate of transcripts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyTally, labelJaccard, tallyValues, transcriptWords, valueFigures, wordErrors } from '../../src/modules/quality-control/sample-value-scores.logic.js';
import { sampleAnnotatorScores, type SampleTruth } from '../../src/modules/quality-control/sample-report.logic.js';

const close = (actual: number | null, expected: number) => assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${actual} ≠ ${expected}`);

describe('sample value scores (issue 29)', () => {
  it('Jaccard of class sets: shared over all named', () => {
    close(labelJaccard(['x', 'y'], ['x', 'z']), 1 / 3); // {x} / {x, y, z}
    close(labelJaccard(['a', 'b', 'c'], ['c', 'b', 'a', 'a']), 1); // order and repeats do not count
    close(labelJaccard(['a', 'b'], ['c']), 0);
    close(labelJaccard(['a', 'b', 'c', 'd'], ['a', 'b']), 2 / 4);
    close(labelJaccard([], []), 1);
  });

  it('word errors: fewest substitutions, deletions and insertions, on lower-cased words without punctuation', () => {
    assert.deepEqual(transcriptWords("Hello, world! It's  fine."), ['hello', 'world', "it's", 'fine']);
    assert.deepEqual(wordErrors('The cat sat on the mat.', 'the cat sat on the mat'), { errors: 0, words: 6 });
    assert.deepEqual(wordErrors('the cat sat on the mat', 'the cat sat on mat'), { errors: 1, words: 6 }); // 1 deletion
    assert.deepEqual(wordErrors('the cat sat', 'a cat sat down'), { errors: 2, words: 3 }); // the→a, + down
    assert.deepEqual(wordErrors('one two three', 'three two one'), { errors: 2, words: 3 }); // one→three, three→one
    assert.deepEqual(wordErrors('', 'extra words'), { errors: 2, words: 0 }); // two insertions
    assert.deepEqual(wordErrors('gone', ''), { errors: 1, words: 1 });
  });

  it('tallies each figure only where the truth and the answer both give it', () => {
    const t = emptyTally();
    const none = { labels: [], value: null };
    tallyValues(t, { labels: ['x', 'y'], value: null }, { labels: ['x', 'z'], value: null }); // Jaccard 1/3
    tallyValues(t, { labels: ['x'], value: null }, { labels: ['x'], value: null }); // single labels: class accuracy's, not Jaccard's
    tallyValues(t, { labels: ['x', 'y'], value: null }, none); // no answer: skipped
    tallyValues(t, { labels: [], value: 10 }, { labels: [], value: 13 }); // |10 − 13| = 3
    tallyValues(t, { labels: [], value: -2.5 }, { labels: [], value: -1.5 }); // 1
    tallyValues(t, { labels: [], value: 4 }, none); // skipped
    tallyValues(t, { labels: [], value: { rating: 7, preference: 'chosen' } }, { labels: [], value: { rating: 5, preference: 'chosen' } }); // agree; 2
    tallyValues(t, { labels: [], value: { rating: 3, preference: 'tie' } }, { labels: [], value: { preference: 'rejected' } }); // disagree; no rating
    tallyValues(t, { labels: [], value: { preference: 'rejected' } }, { labels: [], value: { rating: 9, preference: 'rejected' } }); // agree; truth has no rating
    tallyValues(t, { labels: [], value: 'the cat sat on the mat' }, { labels: [], value: 'the cat sat on mat' }); // 1 of 6
    tallyValues(t, { labels: [], value: 'hello world' }, { labels: [], value: 'hello there world now' }); // 2 insertions of 2
    const f = valueFigures(t);
    close(f.label_jaccard, 1 / 3);
    close(f.value_mae, (3 + 1) / 2);
    close(f.preference_accuracy, 2 / 3);
    close(f.rating_mae, 2);
    close(f.transcript_wer, (1 + 2) / (6 + 2)); // micro: 3 errors over 8 reference words
  });

  it('gives null figures when nothing was scored', () => {
    assert.deepEqual(valueFigures(emptyTally()), { label_jaccard: null, value_mae: null, preference_accuracy: null, rating_mae: null, transcript_wer: null });
    const t = emptyTally();
    tallyValues(t, { labels: [], value: '' }, { labels: [], value: 'words' }); // no reference word: no rate
    assert.equal(valueFigures(t).transcript_wer, null);
  });

  it('adds them to each annotator in the report; a multi-label sample leaves class accuracy to single ones', () => {
    const truth = new Map<number, SampleTruth>([
      [1, { label: 'x', labels: ['x', 'y'], spans: null, text: null }],
      [2, { label: 'yes', spans: null, text: null }],
      [3, { label: null, spans: null, text: null, value: 10 }],
    ]);
    const scores = sampleAnnotatorScores([
      { sample_id: 1, user_id: 1, label: 'x', labels: null, spans: null }, // {x} vs {x, y}: 1/2, not an accurate class
      { sample_id: 2, user_id: 1, label: 'no', spans: null }, // wrong class: accuracy 0
      { sample_id: 3, user_id: 1, label: null, spans: null, value: 12.5 }, // 2.5
    ], truth);
    assert.deepEqual([scores[0].samples, scores[0].class_accuracy, scores[0].label_jaccard, scores[0].value_mae], [3, 0, 0.5, 2.5]);
  });
});
