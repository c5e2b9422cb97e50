import { describe, expect, it } from 'vitest';
import { computeEtag } from '../../../../../src/api/prediction/v1/etag.js';
import { endpoint, fields, validateEndpoint } from './fixtures.js';

function errorsAt(spec: Record<string, unknown>): string[] {
  return fields(validateEndpoint(endpoint(spec)));
}

describe('PredictionEndpoint validation', () => {
  it('accepts a minimal endpoint and a full one', () => {
    expect(validateEndpoint(endpoint())).toEqual({ errors: [], warnings: [] });
    const full = endpoint({
      description: 'Scores churn risk',
      trafficSplit: { '4712380917': 70, '8815520493': 30 },
      labels: { team: 'growth', env: 'prod' },
      encryptionSpec: { kmsKeyName: 'projects/p/locations/us/keyRings/r/cryptoKeys/k' },
      network: 'projects/123456789012/global/networks/default',
      predictRequestResponseLoggingConfig: {
        enabled: true,
        samplingRate: 1,
        bigqueryDestination: { outputUri: 'bq://my-project.logs.requests' },
      },
    });
    expect(validateEndpoint(full)).toEqual({ errors: [], warnings: [] });
  });

  it('refuses anything that is not an object, and a missing spec', () => {
    for (const bad of [null, undefined, 42, 'text', [], [endpoint()]])
      expect(fields(validateEndpoint(bad))).toEqual(['']);
    expect(fields(validateEndpoint({ kind: 'PredictionEndpoint' }))).toEqual(['spec']);
    expect(fields(validateEndpoint({ spec: 'x' }))).toEqual(['spec']);
  });

  describe('spec.displayName', () => {
    it('is required and non-empty', () => {
      expect(errorsAt({ displayName: undefined })).toEqual(['spec.displayName']);
      expect(errorsAt({ displayName: '' })).toEqual(['spec.displayName']);
      expect(errorsAt({ displayName: 7 })).toEqual(['spec.displayName']);
    });

    it('counts code points: 128 emoji pass, 129 do not', () => {
      const rocket = '🚀';
      expect(rocket.length).toBe(2);
      expect(errorsAt({ displayName: rocket.repeat(128) })).toEqual([]);
      const result = validateEndpoint(endpoint({ displayName: rocket.repeat(129) }));
      expect(result.errors).toMatchObject([{ field: 'spec.displayName', type: 'FieldValueTooLong' }]);
      expect(errorsAt({ displayName: 'x'.repeat(129) })).toEqual(['spec.displayName']);
    });

    it('accepts any UTF-8', () => {
      expect(errorsAt({ displayName: 'Prévisions — 予測 — تنبؤ — 🛍️' })).toEqual([]);
    });
  });

  describe('spec.labels', () => {
    it('accepts international lowercase letters, caseless scripts, digits, _ and -', () => {
      const labels = {
        équipe: 'données',
        チーム: '推薦',
        отдел: 'аналитика',
        विभाग: 'विश्लेषण',
        'cost_center-1': '',
        ß: '42',
      };
      expect(errorsAt({ labels })).toEqual([]);
    });

    it('refuses upper case, a leading digit or underscore, spaces and emoji at the key path', () => {
      expect(errorsAt({ labels: { Team: 'a' } })).toEqual(['spec.labels[Team]']);
      expect(errorsAt({ labels: { Équipe: 'a' } })).toEqual(['spec.labels[Équipe]']);
      expect(errorsAt({ labels: { '1team': 'a' } })).toEqual(['spec.labels[1team]']);
      expect(errorsAt({ labels: { _team: 'a' } })).toEqual(['spec.labels[_team]']);
      expect(errorsAt({ labels: { '': 'a' } })).toEqual(['spec.labels[]']);
      expect(errorsAt({ labels: { team: 'Growth' } })).toEqual(['spec.labels[team]']);
      expect(errorsAt({ labels: { team: 'a b' } })).toEqual(['spec.labels[team]']);
      expect(errorsAt({ labels: { team: '🚀' } })).toEqual(['spec.labels[team]']);
      expect(errorsAt({ labels: { team: 3 } })).toEqual(['spec.labels[team]']);
    });

    it('reports a bad key and a bad value of different labels together', () => {
      expect(errorsAt({ labels: { Team: 'a', env: 'PROD' } })).toEqual(['spec.labels[Team]', 'spec.labels[env]']);
    });

    it('limits keys and values to 64 code points', () => {
      expect(errorsAt({ labels: { ['k'.repeat(64)]: 'v'.repeat(64) } })).toEqual([]);
      expect(errorsAt({ labels: { team: '数'.repeat(64) } })).toEqual([]);
      expect(errorsAt({ labels: { team: '数'.repeat(65) } })).toEqual(['spec.labels[team]']);
      expect(errorsAt({ labels: { ['k'.repeat(65)]: 'v' } })).toEqual([`spec.labels[${'k'.repeat(65)}]`]);
    });

    it('allows at most 64 labels', () => {
      const labels = (n: number): Record<string, string> =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}`, 'v']));
      expect(errorsAt({ labels: labels(64) })).toEqual([]);
      expect(errorsAt({ labels: labels(65) })).toEqual(['spec.labels']);
    });

    it('must be a map', () => {
      expect(errorsAt({ labels: ['a'] })).toEqual(['spec.labels']);
    });
  });

  describe('spec.trafficSplit', () => {
    it('sums to exactly 100, or is empty or absent', () => {
      expect(errorsAt({ trafficSplit: { '1': 70, '2': 30 } })).toEqual([]);
      expect(errorsAt({ trafficSplit: { '1': 100, '2': 0 } })).toEqual([]);
      expect(errorsAt({ trafficSplit: {} })).toEqual([]);
      expect(errorsAt({ trafficSplit: undefined })).toEqual([]);
      expect(errorsAt({ trafficSplit: { '1': 70, '2': 20 } })).toEqual(['spec.trafficSplit']);
      expect(errorsAt({ trafficSplit: { '1': 0 } })).toEqual(['spec.trafficSplit']);
      expect(errorsAt({ trafficSplit: { '1': 60, '2': 60 } })).toEqual(['spec.trafficSplit']);
    });

    it('names the bad key or value in the path', () => {
      expect(errorsAt({ trafficSplit: { champion: 100 } })).toEqual(['spec.trafficSplit[champion]']);
      expect(errorsAt({ trafficSplit: { '12345678901': 100 } })).toEqual(['spec.trafficSplit[12345678901]']);
      expect(errorsAt({ trafficSplit: { '7': 101 } })).toEqual(['spec.trafficSplit[7]']);
      expect(errorsAt({ trafficSplit: { '7': -1, '8': 101 } })).toEqual([
        'spec.trafficSplit[7]',
        'spec.trafficSplit[8]',
      ]);
      expect(errorsAt({ trafficSplit: { '7': 50.5, '8': 49.5 } })).toEqual([
        'spec.trafficSplit[7]',
        'spec.trafficSplit[8]',
      ]);
      expect(errorsAt({ trafficSplit: { '7': '100' } })).toEqual(['spec.trafficSplit[7]']);
    });

    it('says what the sum is', () => {
      const [error] = validateEndpoint(endpoint({ trafficSplit: { '1': 70, '2': 20 } })).errors;
      expect(error?.detail).toContain('sum to 90');
    });
  });

  describe('spec.network and spec.enablePrivateServiceConnect', () => {
    it('accepts a network named by project number', () => {
      expect(errorsAt({ network: 'projects/123456789012/global/networks/ml-vpc' })).toEqual([]);
    });

    it('refuses a project id and explains why', () => {
      const result = validateEndpoint(endpoint({ network: 'projects/my-project/global/networks/default' }));
      expect(fields(result)).toEqual(['spec.network']);
      expect(result.errors[0]?.detail).toContain('project NUMBER');
      expect(errorsAt({ network: 'projects/123/regions/us/networks/default' })).toEqual(['spec.network']);
      expect(errorsAt({ network: 'projects/123/global/networks/Default' })).toEqual(['spec.network']);
    });

    it('refuses both together and warns that enablePrivateServiceConnect is deprecated', () => {
      const both = validateEndpoint(
        endpoint({ network: 'projects/1/global/networks/n', enablePrivateServiceConnect: true }),
      );
      expect(fields(both)).toEqual(['spec.enablePrivateServiceConnect']);
      expect(both.warnings).toHaveLength(1);
      const alone = validateEndpoint(endpoint({ enablePrivateServiceConnect: true }));
      expect(alone.errors).toEqual([]);
      expect(alone.warnings[0]).toMatch(/deprecated.*spec\.network/);
      expect(
        validateEndpoint(endpoint({ network: 'projects/1/global/networks/n', enablePrivateServiceConnect: false }))
          .errors,
      ).toEqual([]);
    });
  });

  describe('spec.predictRequestResponseLoggingConfig', () => {
    const samplingRate = 'spec.predictRequestResponseLoggingConfig.samplingRate';
    const outputUri = 'spec.predictRequestResponseLoggingConfig.bigqueryDestination.outputUri';
    const logging = (cfg: Record<string, unknown>): string[] =>
      errorsAt({ predictRequestResponseLoggingConfig: { enabled: true, ...cfg } });
    const uri = (u: string): string[] => logging({ bigqueryDestination: { outputUri: u } });

    it('takes a sampling rate in (0, 1]', () => {
      expect(logging({ samplingRate: 1 })).toEqual([]);
      expect(logging({ samplingRate: 0.0001 })).toEqual([]);
      expect(logging({ samplingRate: 0 })).toEqual([samplingRate]);
      expect(logging({ samplingRate: -0.5 })).toEqual([samplingRate]);
      expect(logging({ samplingRate: 1.01 })).toEqual([samplingRate]);
    });

    it('takes bq://project[.dataset[.table]] URIs', () => {
      for (const good of [
        'bq://my-project',
        'bq://my-project.logs',
        'bq://my-project.logs.requests',
        'bq://example.com:my-project.logs.t',
        'bq://my-project.logs.tâble_1',
      ]) {
        expect(uri(good), good).toEqual([]);
      }
      for (const bad of [
        'gs://bucket/x',
        'bq://',
        'bq://ab',
        'bq://My-Project',
        'bq://my-project-',
        'bq://1project',
        'bq://my-project.log-s',
        'bq://my-project.logs.t.x',
        'bq://my-project..t',
        'bq://a'.padEnd(40, 'a'),
        'bq://:my-project',
        `bq://my-project.logs.${'t'.repeat(1025)}`,
      ]) {
        expect(uri(bad), bad).toEqual([outputUri]);
      }
    });
  });

  it('takes a Cloud KMS key name', () => {
    expect(errorsAt({ encryptionSpec: { kmsKeyName: 'projects/p/locations/l/keyRings/r/cryptoKeys/k' } })).toEqual([]);
    for (const bad of [
      'projects/p/keyRings/r/cryptoKeys/k',
      'projects/p/locations/l/keyRings/r/cryptoKeys/',
      'projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1',
      '',
    ]) {
      expect(errorsAt({ encryptionSpec: { kmsKeyName: bad } }), bad).toEqual(['spec.encryptionSpec.kmsKeyName']);
    }
    expect(errorsAt({ encryptionSpec: {} })).toEqual(['spec.encryptionSpec.kmsKeyName']);
  });

  it('reports every broken rule at once', () => {
    const result = validateEndpoint(
      endpoint({
        displayName: '',
        labels: { A: 'b' },
        trafficSplit: { '1': 50 },
        network: 'projects/x/global/networks/n',
      }),
    );
    expect(fields(result).sort()).toEqual(['spec.displayName', 'spec.labels[A]', 'spec.network', 'spec.trafficSplit']);
  });
});

describe('PredictionEndpoint spec.etag on update', () => {
  const stored = endpoint({ trafficSplit: { '1': 100 } });
  const currentEtag = computeEtag((stored as { spec: unknown }).spec);
  const storedWithStatus = { ...stored, status: { etag: currentEtag } };

  it('accepts a spec change carrying the current status.etag', () => {
    const update = endpoint({ trafficSplit: { '1': 50, '2': 50 }, etag: currentEtag });
    expect(validateEndpoint(update, storedWithStatus).errors).toEqual([]);
  });

  it('refuses a spec change carrying a stale etag and tells the user to re-read', () => {
    const update = endpoint({ trafficSplit: { '1': 50, '2': 50 }, etag: 'stale-etag' });
    const result = validateEndpoint(update, storedWithStatus);
    expect(fields(result)).toEqual(['spec.etag']);
    expect(result.errors[0]?.detail).toMatch(/re-read/);
  });

  it('refuses an etag when the stored object has no status.etag yet', () => {
    const update = endpoint({ trafficSplit: { '1': 50, '2': 50 }, etag: currentEtag });
    expect(fields(validateEndpoint(update, stored))).toEqual(['spec.etag']);
  });

  it('lets metadata-only updates through with an old etag in spec (a finalizer being added)', () => {
    const oldWithStaleEtag = {
      ...endpoint({ trafficSplit: { '1': 100 }, etag: 'etag-from-last-week' }),
      status: { etag: currentEtag },
    };
    const withFinalizer = {
      ...oldWithStaleEtag,
      metadata: {
        name: 'churn',
        namespace: 'endpoint-demo',
        finalizers: ['prediction.endpoint-operator.dev/undeploy'],
      },
    };
    expect(validateEndpoint(withFinalizer, oldWithStaleEtag).errors).toEqual([]);
  });

  it('ignores key order when deciding whether the spec changed', () => {
    const old = { ...endpoint({ labels: { a: '1', b: '2' }, etag: 'old' }), status: { etag: 'new' } };
    const reordered = endpoint({ etag: 'old', labels: { b: '2', a: '1' } });
    expect(validateEndpoint(reordered, old).errors).toEqual([]);
  });

  it('does not apply without an etag (blind overwrite) or on create', () => {
    expect(validateEndpoint(endpoint({ displayName: 'changed' }), storedWithStatus).errors).toEqual([]);
    expect(validateEndpoint(endpoint({ etag: 'anything' })).errors).toEqual([]);
    expect(validateEndpoint(endpoint({ etag: '', displayName: 'changed' }), storedWithStatus).errors).toEqual([]);
  });
});
