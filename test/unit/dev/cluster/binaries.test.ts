import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KWOK, RELEASES, selectedRelease } from '../../../../dev/cluster/binaries.js';
import { toolsDir } from '../../../../dev/cluster/go-build.js';

function goMod(module: string): string {
  return readFileSync(join(toolsDir(), module, 'go.mod'), 'utf8');
}

describe('the releases the local cluster builds', () => {
  it('is 1.37 by default, and EO_KUBE_RELEASE picks another supported minor', () => {
    expect(selectedRelease({}).version).toBe('v1.37.2');
    expect(selectedRelease({ EO_KUBE_RELEASE: '1.35' }).version).toBe('v1.35.4');
    expect(() => selectedRelease({ EO_KUBE_RELEASE: '1.20' })).toThrow(
      /not a release this project builds \(1\.37, 1\.35\)/,
    );
  });

  it('pins in each wrapper module the release it names, with every staging module at the matching v0 release', () => {
    for (const r of RELEASES) {
      const mod = goMod(r.kubernetes.module);
      expect(mod).toMatch(new RegExp(`^\\tk8s\\.io/kubernetes ${r.version}\\b`, 'm'));
      const staging = [...mod.matchAll(/^\t(k8s\.io\/[a-z-]+) => \1 (v\S+)$/gm)];
      expect(staging.length).toBeGreaterThanOrEqual(31);
      expect(new Set(staging.map((m) => m[2]))).toEqual(new Set([r.version.replace(/^v1\./, 'v0.')]));
      expect(goMod(r.etcd.module)).toContain(`\tgo.etcd.io/etcd/server/v3 ${r.etcd.version} `);
    }
    expect(goMod(KWOK.module)).toContain(`\tsigs.k8s.io/kwok ${KWOK.version} `);
  });

  it('sets the version the binaries report through the component-base and client-go ldflags', () => {
    const flags = (RELEASES[0]?.kubernetes.ldflags ?? []).join(' ');
    expect(flags).toContain('-X k8s.io/component-base/version.gitVersion=v1.37.2');
    expect(flags).toContain('-X k8s.io/client-go/pkg/version.gitVersion=v1.37.2');
    expect(flags).toContain('-X k8s.io/component-base/version.gitMinor=37');
  });
});
