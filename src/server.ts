import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

const RELEASE_GRACE_MS = 10_000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const { app, deps } = await buildApp(config);
  deps.metrics.collectProcessMetrics();
  let deadline: NodeJS.Timeout | null = null;
  // Past the deadline the jobs still running are released back to the queue (not failed) and lingering connections
  // are cut; a handler deaf to its signal gets RELEASE_GRACE_MS more before the process exits anyway.
  const pastDeadline = () => {
    app.log.warn('shutdown deadline passed: releasing running jobs, closing open connections');
    deps.queue.release();
    app.server.closeAllConnections();
    setTimeout(() => {
      app.log.error('jobs still running after their release; exiting');
      process.exit(0);
    }, RELEASE_GRACE_MS).unref();
  };
  // Graceful stop: no new connections; in-flight requests and running jobs finish within SHUTDOWN_TIMEOUT_S. A second
  // signal ends the wait at once.
  const shutdown = async (signal: string) => {
    if (deadline) {
      clearTimeout(deadline);
      pastDeadline();
      return;
    }
    app.log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down');
    deadline = setTimeout(pastDeadline, config.shutdownTimeoutMs);
    await app.close();
    clearTimeout(deadline);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  // A worker's port answers only /api/health, /api/ready and /metrics.
  if (config.role === 'worker') app.log.info('worker started: taking jobs from the queue');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
