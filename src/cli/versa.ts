#!/usr/bin/env node
// The `versa` bin (package.json "bin"). It only runs the command line: no "am I the main module?" test, which fails
// behind the symlinks npx, npm link, a global install and node_modules/.bin put in front of it (issue 31). The
// command-line client itself is main.ts; this file is the one place it reads the process's environment.
import { main } from './main.js';

main(process.argv.slice(2), { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`versa: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
