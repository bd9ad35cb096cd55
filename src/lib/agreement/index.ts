/** Labelling quality control's figures (issue 29): scoring against ground truth, agreement, consensus. Pure. */
export * from './shapes.js';
export * from './labels.js';
export * from './consensus.js';
