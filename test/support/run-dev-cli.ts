// Runs the development binary from source (used by tests through `node --import tsx`), as run-cli.ts does the product's.
import { main } from '../../dev/main.js';

process.exitCode = await main(process.argv.slice(2));
