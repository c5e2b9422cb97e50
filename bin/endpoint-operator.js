#!/usr/bin/env node
// The published entry point: the compiled CLI (built by `npm ci` through the `prepare` script).
import { main } from '../dist/src/main.js';

process.exitCode = await main(process.argv.slice(2));
