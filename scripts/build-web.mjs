#!/usr/bin/env node
// Builds the web pages into web/dist when the front end exists (it arrives with the pages issue).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

if (!existsSync('web/vite.config.ts')) process.exit(0);
const result = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
