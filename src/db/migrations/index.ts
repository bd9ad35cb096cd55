import type { Migration } from 'kysely';
import type { DialectName } from '../dialect.js';
import { foundation } from './0001-foundation.js';
import { models } from './0002-models.js';
import { versions } from './0003-versions.js';
import { exportsMigration } from './0004-exports.js';
import { teams } from './0005-teams.js';
import { annotationClassImageIndex } from './0006-annotation-class-image-index.js';
import { projectStatus } from './0007-project-status.js';
import { training } from './0008-training.js';
import { quality } from './0009-quality.js';
import { samples } from './0010-samples.js';
import { pipelines } from './0011-pipelines.js';
import { labelling } from './0013-labelling.js';
import { sampleTeams } from './0014-sample-teams.js';
import { imageBytesNotUnique } from './0015-image-bytes-not-unique.js';
import { remeasureImages } from './0016-remeasure-images.js';
import { annotationBoxes } from './0017-annotation-boxes.js';
import { projectRevisions } from './0018-project-revisions.js';
import { projectRevisionParts } from './0019-project-revision-parts.js';
import { pipelineOwners } from './0020-pipeline-owners.js';
import { trainingAdmission } from './0021-training-admission.js';
import { modelThresholds } from './0025-model-thresholds.js';
import { countAcceptedAnnotations } from './0026-count-accepted-annotations.js';
import { shapes } from './0027-shapes.js';
import { versionShapes } from './0028-version-shapes.js';
import { videos } from './0029-videos.js';
import { tracks } from './0030-tracks.js';
import { projectStorages } from './0031-project-storages.js';
import { trackSuggestions } from './0032-track-suggestions.js';
import { versionFrames } from './0033-version-frames.js';
import { sampleFrames } from './0034-sample-frames.js';
import { qualityControl } from './0035-quality-control.js';
import { loginFailures } from './0037-login-failures.js';
import { modelCheckpoints } from './0038-model-checkpoints.js';
import { fineHashes } from './0039-fine-hashes.js';
import { qcQueue } from './0040-qc-queue.js';
import { qcSamples } from './0041-qc-samples.js';
import { multiLabel } from './0042-multi-label.js';
import { invitationLinks } from './0043-invitation-links.js';
import { classModalities } from './0044-class-modalities.js';
import { blobClaims } from './0046-blob-claims.js';
import { qcSampleQueue } from './0047-qc-sample-queue.js';
import { qcQueueOnInsert } from './0048-qc-queue-on-insert.js';
import { qcTaskReviews } from './0049-qc-task-reviews.js';
import { qcSampleValues } from './0051-qc-sample-values.js';
import { qcSampleTaskReviews } from './0052-qc-sample-task-reviews.js';

/** Every migration, in order. Names are stable forever: they are recorded in the database. */
export function migrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001-foundation': foundation(dialect),
    '0002-models': models(dialect),
    '0003-versions': versions(dialect),
    '0004-exports': exportsMigration(dialect),
    '0005-teams': teams(dialect),
    '0006-annotation-class-image-index': annotationClassImageIndex(),
    '0007-project-status': projectStatus(),
    '0008-training': training(dialect),
    '0009-quality': quality(dialect),
    '0010-samples': samples(dialect),
    '0011-pipelines': pipelines(dialect),
    '0013-labelling': labelling(dialect),
    '0014-sample-teams': sampleTeams(),
    '0015-image-bytes-not-unique': imageBytesNotUnique(dialect),
    '0016-remeasure-images': remeasureImages(),
    '0017-annotation-boxes': annotationBoxes(dialect),
    '0018-project-revisions': projectRevisions(dialect),
    '0019-project-revision-parts': projectRevisionParts(dialect),
    '0020-pipeline-owners': pipelineOwners(),
    '0021-training-admission': trainingAdmission(),
    '0025-model-thresholds': modelThresholds(),
    '0026-count-accepted-annotations': countAcceptedAnnotations(),
    '0027-shapes': shapes(),
    '0028-version-shapes': versionShapes(),
    '0029-videos': videos(dialect),
    '0030-tracks': tracks(dialect),
    '0031-project-storages': projectStorages(dialect),
    '0032-track-suggestions': trackSuggestions(dialect),
    '0033-version-frames': versionFrames(),
    '0034-sample-frames': sampleFrames(),
    '0035-quality-control': qualityControl(dialect),
    '0037-login-failures': loginFailures(),
    '0038-model-checkpoints': modelCheckpoints(),
    '0039-fine-hashes': fineHashes(),
    '0040-qc-queue': qcQueue(),
    '0041-qc-samples': qcSamples(dialect),
    '0042-multi-label': multiLabel(),
    '0043-invitation-links': invitationLinks(),
    '0044-class-modalities': classModalities(),
    '0046-blob-claims': blobClaims(),
    '0047-qc-sample-queue': qcSampleQueue(),
    '0048-qc-queue-on-insert': qcQueueOnInsert(dialect),
    '0049-qc-task-reviews': qcTaskReviews(dialect),
    '0051-qc-sample-values': qcSampleValues(),
    '0052-qc-sample-task-reviews': qcSampleTaskReviews(dialect),
  };
}
