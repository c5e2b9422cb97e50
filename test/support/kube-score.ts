/**
 * kube-score (github.com/zegl/kube-score), the static checker the ecosystem runs on charts, built from the Go module
 * proxy (tools/kube-score) on first use and cached like the other tools (dev/cluster/go-build.ts). It reads the
 * objects as YAML and grades each check: a finding is a check graded WARNING or CRITICAL that was neither skipped
 * nor switched off by the object's own `kube-score/ignore` annotation (which kube-score honours by itself).
 */
import { execFile } from 'node:child_process';
import yaml from 'js-yaml';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';
import { selectedRelease } from '../../dev/cluster/binaries.js';

const VERSION = 'v1.20.0';

export const KUBE_SCORE: GoModuleBuild = {
  module: 'kube-score',
  version: VERSION,
  binaries: ['kube-score'],
  ldflags: [`-X main.version=${VERSION}`],
  versionCheck: { args: () => ['version'], expect: `kube-score version: ${VERSION}` },
};

/** kube-score's grades (scorecard.Grade): WARNING and below are findings. */
const GRADE_WARNING = 5;
const GRADE_NAMES: Record<number, string> = { 1: 'CRITICAL', 5: 'WARNING' };

export interface KubeScoreFinding {
  /** kind/namespace/name of the object. */
  readonly object: string;
  readonly check: string;
  readonly grade: 'CRITICAL' | 'WARNING';
  readonly comments: readonly string[];
}

interface ScoredObject {
  readonly type_meta: { readonly kind: string };
  readonly object_meta: { readonly name: string; readonly namespace?: string };
  readonly checks: readonly {
    readonly check: { readonly id: string };
    readonly grade: number;
    readonly skipped: boolean;
    readonly comments: readonly { readonly path: string; readonly summary: string }[] | null;
  }[];
}

/** kube-score's findings on `objects`, scored for the Kubernetes minor the tests run. */
export async function kubeScore(objects: readonly unknown[]): Promise<KubeScoreFinding[]> {
  const binary = (await ensureGoBuild(KUBE_SCORE))['kube-score'];
  if (binary === undefined) throw new Error('no kube-score among the built binaries');
  const minor = selectedRelease().version.replace(/^v?(\d+\.\d+).*$/, 'v$1');
  const args = ['score', '--output-format', 'json', '--kubernetes-version', minor, '-'];
  const input = objects.map((o) => yaml.dump(o, { noRefs: true })).join('---\n');
  // kube-score exits 1 when it finds something; its verdict is the JSON either way.
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(binary, args, { maxBuffer: 64 * 1024 * 1024 }, (error, out, err) => {
      if (error !== null && (error.code !== 1 || out === ''))
        reject(new Error(`kube-score ${args.join(' ')}: ${error.message}\n${err}`));
      else resolve(out);
    });
    child.stdin?.end(input);
  });
  // `null` when no object is of a kind it scores (a ConfigMap, a Flux Kustomization).
  return findings((JSON.parse(stdout) as ScoredObject[] | null) ?? []);
}

function findings(scored: readonly ScoredObject[]): KubeScoreFinding[] {
  return scored.flatMap((o) =>
    o.checks
      .filter((c) => !c.skipped && c.grade <= GRADE_WARNING)
      .map((c) => ({
        object: `${o.type_meta.kind}/${o.object_meta.namespace ?? ''}/${o.object_meta.name}`,
        check: c.check.id,
        grade: (GRADE_NAMES[c.grade] ?? 'CRITICAL') as KubeScoreFinding['grade'],
        comments: (c.comments ?? []).map((m) => `${m.path === '' ? '' : `(${m.path}) `}${m.summary}`),
      })),
  );
}
