import * as ort from 'onnxruntime-node';

/** What this process's onnxruntime build offers: its execution providers (bundled or needing libraries) and version. */
export function onnxRuntimeInfo(): { providers: Array<{ name: string; bundled: boolean }>; version: string } {
  return {
    providers: ort.listSupportedBackends().map((b) => ({ name: b.name, bundled: b.bundled })),
    version: ort.env.versions.node ?? ort.env.versions.common,
  };
}
