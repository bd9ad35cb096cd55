import { UsageError, type Io } from './context.js';

/**
 * The password: `--password`, else VERSA_PASSWORD, else asked for on a terminal (not echoed), else the first line of
 * stdin when it is piped (`echo "$PW" | versa login --email …`).
 */
export async function readPassword(given: string | undefined, io: Io): Promise<string> {
  if (given) return given;
  if (io.env.VERSA_PASSWORD) return io.env.VERSA_PASSWORD;
  const password = io.stdin.isTTY ? await askHidden('Password: ', io) : await firstLine(io.stdin);
  if (!password) throw new UsageError('no password: give --password, set VERSA_PASSWORD, or type it when asked (or pipe it on stdin)');
  return password;
}

async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += chunk.toString();
    const end = text.indexOf('\n');
    if (end >= 0) return text.slice(0, end).replace(/\r$/, '');
  }
  return text.replace(/\r$/, '');
}

/** Reads a line from the terminal in raw mode, echoing nothing; Ctrl-C or Ctrl-D cancel. */
function askHidden(question: string, io: Io): Promise<string> {
  const input = io.stdin;
  io.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      io.stderr.write('\n');
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003' || ch === '\u0004') {
          finish();
          reject(new UsageError('cancelled'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    input.setRawMode(true);
    input.resume();
    input.on('data', onData);
  });
}
