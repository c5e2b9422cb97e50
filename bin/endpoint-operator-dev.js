#!/usr/bin/env node
// The development tree's entry point (dev/): the local cluster and `npm start`'s environment. The product's image
// ships bin/endpoint-operator.js and dist/src only.
import { main } from '../dist/dev/main.js';

process.exitCode = await main(process.argv.slice(2));
