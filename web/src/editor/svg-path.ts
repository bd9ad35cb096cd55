import type { PathSink } from './renderer.js';

const n = (v: number) => Math.round(v * 100) / 100;

/**
 * The editor's outlines as an SVG path's `d` (the review overlay draws with the editor's traceShape through this,
 * so every shape looks the same in both).
 */
export class SvgPath implements PathSink {
  d = '';

  moveTo(x: number, y: number): void {
    this.d += `M${n(x)} ${n(y)}`;
  }

  lineTo(x: number, y: number): void {
    this.d += `L${n(x)} ${n(y)}`;
  }

  closePath(): void {
    this.d += 'Z';
  }

  rect(x: number, y: number, w: number, h: number): void {
    this.d += `M${n(x)} ${n(y)}h${n(w)}v${n(h)}h${n(-w)}Z`;
  }

  /** Two half arcs from the current point (the end of the x radius) round to it again. */
  ellipse(cx: number, cy: number, rx: number, ry: number, rotation: number): void {
    const c = Math.cos(rotation), s = Math.sin(rotation), deg = n((rotation * 180) / Math.PI);
    const arc = (sign: number) => `A${n(rx)} ${n(ry)} ${deg} 1 1 ${n(cx + sign * rx * c)} ${n(cy + sign * rx * s)}`;
    this.d += `${arc(-1)}${arc(1)}Z`;
  }
}
