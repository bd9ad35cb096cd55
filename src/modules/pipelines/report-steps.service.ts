import type { StepData } from '../../plugins/plugin-registry.js';
import { ReportParams, WebhookParams } from './builtin-step-params.schemas.js';
import { countByClass, type StepEnvironment, type StepSpec } from './step-kit.logic.js';
import { webhookAllowed } from './webhook-sender.adapter.js';

/** report: what earlier steps found, per class and per image. */
export function reportStep(): StepSpec {
  return {
    name: 'report',
    title: 'Report',
    description: 'A summary of what earlier steps found: images, detections per class and rule violations per image',
    schema: ReportParams,
    impl: {
      inputs: [],
      outputs: ['report'],
      writes: false,
      async execute(_ctx, params, input) {
        const max = (params.max_images as number | undefined) ?? 1000;
        const violations: NonNullable<StepData['violations']> = input.violations ?? new Map();
        const perImage = [...violations].slice(0, max).map(([image_id, list]) => ({
          image_id,
          violations: list.map((v) => ({ subject: v.subject.class_name, box: v.subject.box, confidence: v.subject.confidence, missing: v.missing })),
        }));
        const report = {
          images: input.images?.length ?? input.detections?.size ?? 0,
          detections: input.detections ? [...input.detections.values()].reduce((n, l) => n + l.length, 0) : 0,
          by_class: input.detections ? countByClass(input.detections) : {},
          violating_images: violations.size,
          violations: [...violations.values()].reduce((n, l) => n + l.length, 0),
          per_image: perImage,
        };
        return { data: { report }, outputs: { report } };
      },
    },
  };
}

/** webhook: the run summary (and the report) POSTed to a URL on the operator's allowlist. */
export function webhookStep({ ports, webhookAllowlist }: StepEnvironment): StepSpec {
  return {
    name: 'webhook',
    title: 'Webhook',
    description: "POSTs the run summary (and the report) to a URL on the operator's WEBHOOK_ALLOWLIST; the only outbound request Versa makes",
    schema: WebhookParams,
    impl: {
      inputs: [],
      outputs: [],
      writes: false,
      check(params) {
        const url = params.url as string;
        return webhookAllowed(url, webhookAllowlist) ? [] : [{ path: ['url'], message: webhookAllowlist.length ? `${url} is not on the webhook allowlist` : 'webhooks are disabled (WEBHOOK_ALLOWLIST is empty)' }];
      },
      async execute(ctx, params, input) {
        const p = params as { url: string; include_report?: boolean };
        const body = { run_id: ctx.runId, project_id: ctx.projectId, step: ctx.stepId, report: p.include_report === false ? undefined : (input.report ?? null), summary: input.summary ?? null };
        const answer = await ports.webhook.post(p.url, body, ctx.signal);
        return { outputs: { status: answer.status } };
      },
    },
  };
}
