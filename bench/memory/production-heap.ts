/**
 * The V8 heap the operator gets in production, so that the memory benchmark measures that and
 * not the development machine's defaults.
 *
 * In a container Node sizes V8's heap from the cgroup memory limit (src/api/environment.cc,
 * SetIsolateCreateParamsForNode: `ResourceConstraints::ConfigureDefaults(min(total, constrained))`),
 * which V8 turns into an old-generation limit and a semi-space size (Heap::HeapSizeFromPhysicalMemory,
 * YoungGenerationSizeFromOldGenerationSize). The chart's default limit of 256Mi gives a 256 MB old
 * generation with 1 MB semi-spaces; a development machine with more than 16 GB gives 4 GB with
 * 16 MB semi-spaces, whose young generation alone takes 48 MB and whose old generation V8 lets
 * grow by a factor of up to 4 between collections instead of about 1.3.
 */
import { DEFAULT_DEPLOY_VALUES } from '../../src/deploy/values.js';

const MiB = 1024 * 1024;
// x64 without pointer compression (Node's builds): kSystemPointerSize / 4 for both multipliers.
const HEAP_LIMIT_MULTIPLIER = 2;
const POINTER_MULTIPLIER = 2;
const MIN_OLD_GENERATION = 128 * HEAP_LIMIT_MULTIPLIER * MiB;
const MAX_OLD_GENERATION = 1024 * HEAP_LIMIT_MULTIPLIER * MiB;
const LOW_MEMORY_OLD_GENERATION = 128 * HEAP_LIMIT_MULTIPLIER * MiB;
const MIN_SEMI_SPACE = 0.5 * POINTER_MULTIPLIER * MiB;
const MAX_SEMI_SPACE = 8 * POINTER_MULTIPLIER * MiB;
const PAGE = 256 * 1024;

/** A Kubernetes memory quantity (`256Mi`, `1Gi`, `512M`, `1e9`) in bytes. */
export function memoryQuantityBytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?(?:e\d+)?)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$/.exec(quantity.trim());
  if (!m?.[1]) throw new Error(`not a memory quantity: ${quantity}`);
  const unit =
    { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/** V8's old-generation limit and semi-space size for a machine (or cgroup) with `physicalBytes` of memory, in MiB. */
export function v8HeapForMemory(physicalBytes: number): { oldSpaceMiB: number; semiSpaceMiB: number } {
  // Heap::MaxOldGenerationSize: doubled on machines with more than 16 GB (huge_max_old_generation_size).
  const maxOld = Math.floor(physicalBytes / 2 ** 30) > 16 ? 2 * MAX_OLD_GENERATION : MAX_OLD_GENERATION;
  const old = Math.min(Math.max((physicalBytes / 4) * HEAP_LIMIT_MULTIPLIER, MIN_OLD_GENERATION), maxOld);
  const oldRounded = Math.ceil(old / PAGE) * PAGE;
  const ratio = oldRounded <= LOW_MEMORY_OLD_GENERATION ? 256 : 128;
  const semi = Math.ceil(Math.min(Math.max(oldRounded / ratio, MIN_SEMI_SPACE), MAX_SEMI_SPACE) / PAGE) * PAGE;
  return { oldSpaceMiB: Math.round(oldRounded / MiB), semiSpaceMiB: semi / MiB };
}

/** The node flags that give a process on this machine the heap of a pod with the chart's default memory limit. */
export function productionHeapFlags(limit = DEFAULT_DEPLOY_VALUES.resources.limits.memory): string[] {
  const heap = v8HeapForMemory(memoryQuantityBytes(limit));
  return [`--max-old-space-size=${heap.oldSpaceMiB}`, `--max-semi-space-size=${heap.semiSpaceMiB}`];
}
