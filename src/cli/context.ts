import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { VersaApi } from './api.js';

/**
 * Exit statuses scripts can test (README "Command line"):
 *   0 done · 1 the server refused or failed (another 4xx, 5xx, a failed job, no connection) · 2 the command line is
 *   wrong · 3 not logged in or not allowed (401, 403) · 4 not found (404, or no project/version of that name or
 *   number) · 5 a wait ran past --timeout (the work goes on on the server).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, notFound: 4, timeout: 5 } as const;

/** An error the CLI reports in one line and turns into its exit status. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}
export class NotFoundError extends CliError {
  constructor(message: string) {
    super(message, EXIT.notFound);
  }
}
export class TimeoutError extends CliError {
  constructor(message: string) {
    super(message, EXIT.timeout);
  }
}

/** What the process gives the CLI: its variables and streams (the bin entry passes process's own; tests their own). */
export interface Io {
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream;
}

/** Options as parsed (one table for every command; see main.ts). */
export type Values = Record<string, string | boolean | string[] | undefined>;

/** What a command runs with. */
export interface Context {
  api: VersaApi;
  server: string;
  values: Values;
  /** The positional arguments after the command (and its subcommand). */
  args: string[];
  io: Io;
  json: boolean;
  quiet: boolean;
  configPath: string;
}

export interface Saved {
  server?: string;
  token?: string;
  email?: string;
}

export const configPathOf = (env: Io['env']) => env.VERSA_CONFIG || join(homedir(), '.config', 'versa', 'credentials.json');

export async function loadSaved(path: string): Promise<Saved> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Saved;
  } catch {
    return {};
  }
}

/** Writes the credentials file readable by its owner only. */
export async function saveCredentials(path: string, saved: Saved): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, JSON.stringify(saved, null, 2), { mode: 0o600 });
  await chmod(path, 0o600);
}

export async function forgetCredentials(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** Prints a command's result: the JSON value with --json, else the short human lines. */
export function print(ctx: Context, data: unknown, human: string | string[]): void {
  if (ctx.json) ctx.io.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  else {
    const lines = Array.isArray(human) ? human : [human];
    if (lines.length) ctx.io.stdout.write(`${lines.join('\n')}\n`);
  }
}

/** A note on stderr (never with --quiet), so stdout stays the result. */
export function note(ctx: Context, line: string): void {
  if (!ctx.quiet) ctx.io.stderr.write(`${line}\n`);
}

export function str(ctx: Context, name: string): string | undefined {
  const v = ctx.values[name];
  return typeof v === 'string' ? v : undefined;
}

export function flag(ctx: Context, name: string): boolean {
  return ctx.values[name] === true;
}

export function wholeNumber(value: string | undefined, name: string, min = 0): number {
  const n = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isInteger(n) || n < min) throw new UsageError(`${name} must be a whole number${min > 0 ? ` ≥ ${min}` : ''}, got "${value ?? ''}"`);
  return n;
}

export function decimal(value: string | undefined, name: string, min: number, max: number): number {
  const n = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new UsageError(`${name} must be a number from ${min} to ${max}, got "${value ?? ''}"`);
  return n;
}

/** The positional argument at `index`, or a usage error naming it. */
export function arg(ctx: Context, index: number, name: string): string {
  const value = ctx.args[index];
  if (value === undefined || value === '') throw new UsageError(`missing ${name}`);
  return value;
}

/** Seconds of --timeout (default 3600; 0: no limit) as a deadline in ms since the epoch, or Infinity. */
export function deadlineOf(ctx: Context): number {
  const raw = str(ctx, 'timeout');
  const seconds = raw === undefined ? 3600 : wholeNumber(raw, '--timeout');
  return seconds === 0 ? Infinity : Date.now() + seconds * 1000;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` (0.25 s, growing to 2 s) until it returns a value; past the deadline a TimeoutError saying `what`. */
export async function waitUntil<T>(deadline: number, what: string, check: () => Promise<T | undefined>): Promise<T> {
  let pause = 250;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() + pause > deadline) throw new TimeoutError(`gave up waiting for ${what} (--timeout); it goes on on the server`);
    await sleep(pause);
    pause = Math.min(2000, pause * 1.5);
  }
}
