// Runs the CLI from source (used by tests through `node --import tsx`), so tests need no build step.
import { main } from '../../src/main.js';

process.exitCode = await main(process.argv.slice(2));
