/**
 * A model-server image's copy of a Python set (`/opt/python`): the `--target` directory pip installed
 * (dev/models/python-packages.ts), hard-linked into the build context, less what a server never runs, and with
 * bytecode that stays valid in the image. Every step replaces or removes the context's own links, never the
 * cached files they share inodes with.
 *
 * 1. The packages' own test suites go: directories named `tests` (NumPy, SciPy, scikit-learn, pandas, ...) and
 *    joblib's `test`, which only pytest imports (no other module of these sets imports one; checked with
 *    `grep -rE "import .*\.tests?"` over the sets). Their `.dist-info/RECORD`s still list them, which matters
 *    only to `pip uninstall`; importlib.metadata reads versions and entry points, not the files.
 * 2. Code a server of these sets never loads goes (the Vertex image: 64 MB of its 467; the server's imports and an
 *    answered `:predict`, listed with `python3 -v`, and the image test, are the check):
 *    - GAPIC's `rest_asyncio` transports, one per service of each generated API client (35 MB in aiplatform_v1 and
 *      v1beta1): each raises ImportError at its top without aiohttp (google-cloud-aiplatform's `async_rest` extra,
 *      which no set installs) and the client imports it under `except ImportError`, so a missing file behaves the
 *      same. Kept when a set has aiohttp.
 *    - Import packages of google-cloud-aiplatform's wheel and its dependencies that its prediction server never
 *      imports (NEVER_IMPORTED): the generative-AI SDKs `vertexai` and `agentplatform`, `vertex_ray`, and
 *      `google.genai` (29 MB).
 *    - Bytecode whose source is gone: pip's `__pycache__` entries for the files removed above.
 * 3. Shared objects lose their symbol tables (`strip --strip-unneeded`): uvloop's, PyYAML's and cryptography's
 *    wheels ship theirs (27 MB in the Vertex set). Imports and calls resolve through the dynamic symbol table,
 *    which stays; only debuggers and native crash traces use the rest. Not the files auditwheel rewrote with
 *    patchelf (the vendored libraries in `*.libs/`, and extension modules it gave an RPATH to reach them):
 *    stripped, NumPy's OpenBLAS failed to load ("ELF load command address/offset not page-aligned"); NumPy's
 *    and SciPy's wheels are stripped already anyway.
 * 4. Bytecode is compiled again, as `unchecked-hash` `.pyc`s: pip's are checked against each source's
 *    modification time, which image layers do not keep to the second (822 of the Vertex server's 3,112 modules
 *    were stale in the image), and uid 65532 on a read-only root cannot rewrite one, so each start compiled
 *    them all again. An unchecked `.pyc` is used as is; the image's sources never change under it.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runLogged } from '../host/exec.js';
import { must } from '../image/debian-rootfs.js';
import type { PythonPackages } from './python-packages.js';

/** Where the image keeps the set. */
export const IMAGE_PYTHON_DIR = '/opt/python';

/** Bump when slimPythonTree changes what ends up in the image (part of the image's tag). */
export const PYTHON_IMAGE_TREE_LAYOUT = 'python-image-tree 3';

/** Import packages (paths below the set) that no model server of these sets imports: step 2's second list. */
export const NEVER_IMPORTED = ['vertexai', 'agentplatform', 'vertex_ray', 'google/genai'] as const;

/** Deletes each `__pycache__/<module>.<tag>.pyc` whose `<module>.py` is gone (Python never loads one). */
const ORPHAN_BYTECODE = [
  'for f; do',
  '  b="${f##*/}"',
  '  [ -e "${f%/__pycache__/*}/${b%%.*}.py" ] || rm -f "$f"',
  'done',
].join('\n');

/**
 * Strips each file named that has no RPATH/RUNPATH (auditwheel's mark) into a new one renamed over it; one that
 * strip refuses stays as it was.
 */
const STRIP = [
  'for f; do',
  '  readelf -d "$f" | grep -qE \'[(](RPATH|RUNPATH)[)]\' && continue',
  '  strip --strip-unneeded -o "$f.stripped" "$f" && mv "$f.stripped" "$f" || rm -f "$f.stripped"',
  'done',
].join('\n');

export async function slimPythonTree(python: PythonPackages, dir: string, logFile: string): Promise<void> {
  await must(
    'find',
    [
      dir,
      '-depth',
      '-type',
      'd',
      '(',
      '-name',
      'tests',
      '-o',
      '-path',
      join(dir, 'joblib/test'),
      ')',
      '-exec',
      'rm',
      '-rf',
      '{}',
      '+',
    ],
    logFile,
  );
  for (const pkg of NEVER_IMPORTED) await rm(join(dir, pkg), { recursive: true, force: true });
  if (!existsSync(join(dir, 'aiohttp')))
    await must('find', [dir, '-path', '*/services/*/transports/rest_asyncio.py', '-delete'], logFile);
  await must(
    'find',
    [dir, '-path', '*/__pycache__/*.pyc', '-exec', 'sh', '-c', ORPHAN_BYTECODE, 'sh', '{}', '+'],
    logFile,
  );
  // strip writes through hard links (it copies over the original): into a new file, renamed over the link.
  await must(
    'find',
    [
      dir,
      '-type',
      'f',
      '-regex',
      String.raw`.*\.so\(\.[0-9]+\)*`,
      '-not',
      '-path',
      '*.libs/*',
      '-exec',
      'sh',
      '-c',
      STRIP,
      'sh',
      '{}',
      '+',
    ],
    logFile,
  );
  // py_compile writes each .pyc to a new file renamed into place; -s/-p name the image's path in the bytecode.
  // Exit 1 means some file did not compile (a package's template or Python 2 example), as pip's own pass allows.
  const code = await runLogged(
    python.python,
    [
      ...python.pythonArgs,
      '-m',
      'compileall',
      '-q',
      '-f',
      '-j',
      '0',
      '--invalidation-mode',
      'unchecked-hash',
      '-s',
      dir,
      '-p',
      IMAGE_PYTHON_DIR,
      dir,
    ],
    { logFile },
  );
  if (code !== 0 && code !== 1) throw new Error(`compileall of ${dir} failed (exit ${code}); see ${logFile}`);
}
