import { useEffect, useRef } from 'react';
import { Chart, type ChartConfiguration } from 'chart.js';

/**
 * One Chart.js chart on its own canvas, rebuilt when its configuration changes. Callers register the controllers
 * and elements their charts use (Chart.register), so a page downloads only those.
 */
export function ChartCanvas({ config, label }: { config: ChartConfiguration; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, config);
    return () => chart.destroy();
  }, [config]);
  return (
    <figure className="health-chart">
      <figcaption>{label}</figcaption>
      <canvas ref={canvas} role="img" aria-label={label} />
    </figure>
  );
}
