/**
 * `versa`: the command-line client of a Versa server (bin entry: versa.ts). Server and token come from --server /
 * --token, VERSA_URL / VERSA_TOKEN, or the file `versa login` writes (VERSA_CONFIG, default
 * ~/.config/versa/credentials.json, mode 600). Results go to stdout (JSON with --json), progress and notes to stderr;
 * the exit status says what happened (context.ts EXIT).
 */
import { parseArgs } from 'node:util';
import { ApiError, ConnectionError, VersaApi } from './api.js';
import { COMMANDS, type Command, DEFAULT_SUBCOMMAND } from './commands.js';
import { completionScript } from './completion.js';
import { CliError, configPathOf, type Context, EXIT, type Io, loadSaved, UsageError, type Values } from './context.js';

const GLOBAL_OPTIONS = ['--server', '--token', '--json', '--quiet', '--help'];

/** Every option any command takes (one table: parseArgs refuses the rest). */
const OPTIONS = {
  server: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
  timeout: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  'display-name': { type: 'string' },
  search: { type: 'string' },
  type: { type: 'string' },
  color: { type: 'string' },
  limit: { type: 'string' },
  format: { type: 'string' },
  'images-only': { type: 'boolean' },
  batch: { type: 'string' },
  concurrency: { type: 'string' },
  'new-classes': { type: 'string' },
  'on-conflict': { type: 'string' },
  strict: { type: 'boolean' },
  project: { type: 'string' },
  name: { type: 'string' },
  out: { type: 'string', short: 'o' },
  'skip-unannotated': { type: 'boolean' },
  'create-classes': { type: 'boolean' },
  seed: { type: 'string' },
  wait: { type: 'boolean' },
  version: { type: 'string' },
  model: { type: 'string' },
  epochs: { type: 'string' },
  imgsz: { type: 'string' },
  device: { type: 'string' },
  adapter: { type: 'string' },
  follow: { type: 'boolean' },
  confidence: { type: 'string' },
  'only-unannotated': { type: 'boolean' },
} as const;

const EXIT_HELP = `Exit status: 0 done · 1 the server refused or failed (another 4xx, 5xx, a failed job, no connection) · 2 wrong
command line · 3 not logged in or not allowed (401/403) · 4 not found (404, no such project name or version number) ·
5 a wait ran past --timeout (default 3600 s; 0 waits for ever).`;

export function usage(): string {
  const rows = COMMANDS.map((c) => `  versa ${c.usage}\n      ${c.summary}`);
  return `versa — command-line client for a Versa server

${rows.join('\n')}
  versa completion bash|zsh
      print a shell completion script
  versa help [COMMAND]
      this help, or one command's

PROJECT is a project's id or its name; a version is its NUMBER in the project (as versa versions lists them).
Options for every command: --server URL (VERSA_URL), --token T (VERSA_TOKEN), --json (one JSON value on stdout; an
error as {"error": …} on stderr), --quiet (no progress or notes on stderr).
${EXIT_HELP}`;
}

function helpFor(words: string[]): string | null {
  const name = words.join(' ');
  const matches = COMMANDS.filter((c) => c.name === name || c.name.startsWith(`${name} `));
  if (matches.length === 0) return null;
  return matches.map((c) => `versa ${c.usage}\n  ${c.summary}${c.options.length ? `\n  options: ${c.options.join(' ')}` : ''}`).join('\n\n')
    + `\n\nOptions for every command: ${GLOBAL_OPTIONS.join(' ')}.\n${EXIT_HELP}`;
}

/** The command the positional words name, and the words left as its arguments. */
function pick(words: string[]): { command: Command; args: string[] } | null {
  const [first, second, ...rest] = words;
  const exact = COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (exact) return { command: exact, args: rest };
  const single = COMMANDS.find((c) => c.name === first);
  if (single) return { command: single, args: words.slice(1) };
  const fallback = DEFAULT_SUBCOMMAND[first];
  const grouped = fallback && COMMANDS.find((c) => c.name === `${first} ${fallback}`);
  return grouped ? { command: grouped, args: words.slice(1) } : null;
}

/** Runs one command line; returns the exit status (errors are reported on stderr here, never thrown). */
export async function main(argv: string[], io: Io): Promise<number> {
  const json = argv.includes('--json');
  try {
    return await run(argv, io);
  } catch (error) {
    return report(error, io, json);
  }
}

async function run(argv: string[], io: Io): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof OPTIONS }>>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  const { values, positionals } = parsed;
  const [first, ...rest] = positionals;
  if (!first || first === 'help' || values.help) {
    const words = first === 'help' ? rest : positionals;
    const text = words.length ? helpFor(words) : usage();
    if (text === null) throw new UsageError(`unknown command "${words.join(' ')}" (versa help lists them)`);
    if (!first && !values.help) {
      io.stderr.write(`${text}\n`);
      return EXIT.usage;
    }
    io.stdout.write(`${text}\n`);
    return EXIT.ok;
  }
  if (first === 'completion') {
    io.stdout.write(completionScript(rest[0] ?? '', COMMANDS, [...GLOBAL_OPTIONS, '--timeout']));
    return EXIT.ok;
  }
  const picked = pick(positionals);
  if (!picked) throw new UsageError(`unknown command "${positionals.slice(0, 2).join(' ')}" (versa help lists them)`);
  const configPath = configPathOf(io.env);
  const saved = await loadSaved(configPath);
  const server = (values.server || io.env.VERSA_URL || saved.server || 'http://127.0.0.1:8000').replace(/\/+$/, '');
  const token = values.token || io.env.VERSA_TOKEN || (saved.server === server ? saved.token : undefined) || null;
  const json = Boolean(values.json);
  const ctx: Context = {
    api: new VersaApi(server, token),
    server,
    values: values as Values,
    args: picked.args,
    io,
    json,
    // With --json and no terminal to draw on, progress would only clutter the logs.
    quiet: Boolean(values.quiet) || (json && !io.stderr.isTTY),
    configPath,
  };
  return picked.command.run(ctx);
}

function report(error: unknown, io: Io, json: boolean): number {
  let code: number = EXIT.failed;
  let status: number | null = null;
  let detail: unknown;
  let message: string;
  if (error instanceof CliError) {
    code = error.exitCode;
    message = error.message;
    detail = error.message;
  } else if (error instanceof ApiError) {
    status = error.status;
    code = status === 401 || status === 403 ? EXIT.auth : status === 404 ? EXIT.notFound : EXIT.failed;
    detail = error.detail;
    message = `the server answered ${error.message}${status === 401 ? ' (log in with versa login, or pass --token)' : ''}`;
  } else if (error instanceof ConnectionError) {
    message = error.message;
    detail = error.message;
  } else {
    message = (error as Error)?.message ?? String(error);
    detail = message;
  }
  if (json) io.stderr.write(`${JSON.stringify({ error: { exit_code: code, status, detail, message } })}\n`);
  else io.stderr.write(`versa: ${message}\n`);
  return code;
}
