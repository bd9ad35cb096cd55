import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The flows whose throughput is counted: images uploaded, images stored by dataset imports, images exported. */
export type Flow = 'ingest' | 'import' | 'export';

/** How a job's run ended; `released` is handed back to the queue by a shutdown, to run again. */
export type JobOutcome = 'succeeded' | 'failed' | 'cancelled' | 'released';

/** Jobs waiting or running, counted where they are recorded (the database), whichever process runs them. */
export type JobDepthSource = () => Promise<{ name: string; status: string; count: number }[]>;

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_SECONDS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600];

/**
 * The Prometheus metrics of one app instance, in a registry of its own (several apps may share a process: tests,
 * scripts), exported as text by `GET /metrics`. Lower layers record through the methods below; none touches
 * prom-client's global registry.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly http = new Histogram({
    name: 'versa_http_request_duration_seconds',
    help: 'HTTP requests by route pattern, method and status class',
    labelNames: ['method', 'route', 'status'],
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly jobDuration = new Histogram({
    name: 'versa_job_duration_seconds',
    help: 'Job runs by job type and outcome',
    labelNames: ['name', 'outcome'],
    buckets: JOB_SECONDS,
    registers: [this.registry],
  });
  private readonly items = new Counter({ name: 'versa_items_total', help: 'Images through each flow (ingest: uploaded; import: stored by dataset imports; export: written to archives)', labelNames: ['flow'], registers: [this.registry] });
  private readonly bytes = new Counter({ name: 'versa_bytes_total', help: 'Bytes through each flow (ingest and import: the image files; export: the archives)', labelNames: ['flow'], registers: [this.registry] });
  private readonly blobDuration = new Histogram({
    name: 'versa_blob_operation_duration_seconds',
    help: 'Blob store operations by operation',
    labelNames: ['operation'],
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly blobErrors = new Counter({ name: 'versa_blob_operation_errors_total', help: 'Blob store operations that failed, by operation', labelNames: ['operation'], registers: [this.registry] });
  private readonly epochs = new Counter({ name: 'versa_trainer_epochs_total', help: 'Training epochs the trainers finished, by adapter', labelNames: ['adapter'], registers: [this.registry] });

  /**
   * prom-client's process metrics (CPU, memory, event loop lag, heap, handles), once per process: the server's entry
   * calls it, not each app a test builds (they would each start an event loop monitor).
   */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Jobs queued and running by type, read at each scrape from `source`. */
  countJobs(source: JobDepthSource): void {
    new Gauge({
      name: 'versa_jobs',
      help: 'Jobs queued or running, by job type and status (the queue depth)',
      labelNames: ['name', 'status'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of await source()) this.set({ name: row.name, status: row.status }, row.count);
      },
    });
  }

  /** `route` is the route's pattern (`/api/projects/:id`), never the URL asked for. */
  request(method: string, route: string, statusCode: number, seconds: number): void {
    this.http.observe({ method, route, status: `${Math.floor(statusCode / 100)}xx` }, seconds);
  }

  job(name: string, outcome: JobOutcome, seconds: number): void {
    this.jobDuration.observe({ name, outcome }, seconds);
  }

  throughput(flow: Flow, items: number, bytes: number): void {
    this.items.inc({ flow }, items);
    this.bytes.inc({ flow }, bytes);
  }

  /** Times one blob store call, counting it as an error when it rejects. */
  async blob<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const end = this.blobDuration.startTimer({ operation });
    try {
      return await call();
    } catch (error) {
      this.blobErrors.inc({ operation });
      throw error;
    } finally {
      end();
    }
  }

  epoch(adapter: string): void {
    this.epochs.inc({ adapter });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
