import { describe, expect, it } from 'vitest';
import { projectAndLocation, sdkSnippetLines } from '../../../../dev/environment/sdk-snippet.js';

describe('projectAndLocation', () => {
  it("reads an endpoint URL's project and location", () => {
    expect(
      projectAndLocation('https://localhost:8090/v1/projects/endpoint-demo/locations/us-central1/endpoints/churn'),
    ).toEqual({
      project: 'endpoint-demo',
      location: 'us-central1',
    });
    expect(projectAndLocation('https://localhost:8090/v1/endpoints/churn')).toBeUndefined();
  });
});

describe('sdkSnippetLines', () => {
  const lines = sdkSnippetLines({
    apiEndpoint: 'localhost:8090',
    project: 'endpoint-demo',
    location: 'us-central1',
    image: '198.19.254.1:5000/endpoint-operator/server:abc',
    artifactUri: 'gs://demo-models/iris/1',
    machineType: 'e2-small',
    python: { python: '/usr/bin/python3', pythonArgs: ['-s'], dir: '/cache/python/aiplatform-sdk-1' },
  });
  const start = lines.findIndex((l) => l.includes("<<'EOF'"));
  const script = lines.slice(start + 1, lines.indexOf('EOF'));

  it('runs the SDK set as installed here, with the gateway CA trusted as the SDK reads it', () => {
    expect(lines[start]).toBe(
      "PYTHONNOUSERSITE=1 PYTHONPATH=/cache/python/aiplatform-sdk-1 /usr/bin/python3 -s - <<'EOF'",
    );
    expect(lines).toContain('export GRPC_DEFAULT_SSL_ROOTS_FILE_PATH="$GATEWAY_CA" REQUESTS_CA_BUNDLE="$GATEWAY_CA"');
  });

  it("is the documented flow, each statement at Python's first column, the here-document ended", () => {
    expect(start).toBeGreaterThan(0);
    expect(lines.indexOf('EOF')).toBe(lines.length - 1);
    // An indented line only continues the call the line before it left open.
    script.forEach((l, n) => {
      if (l.startsWith(' ')) expect(script[n - 1]).toMatch(/,$/);
    });
    const statements = script.filter((l) => !l.startsWith(' '));
    expect(statements).toEqual([
      'import os',
      'from google.cloud import aiplatform',
      'from google.oauth2.credentials import Credentials',
      'aiplatform.init(project="endpoint-demo", location="us-central1", api_endpoint="localhost:8090",',
      'model = aiplatform.Model.upload(display_name="iris", artifact_uri="gs://demo-models/iris/1",',
      'endpoint = aiplatform.Endpoint.create(display_name="iris")',
      'model.deploy(endpoint=endpoint, machine_type="e2-small", min_replica_count=1, traffic_percentage=100)',
      expect.stringMatching(
        /^print\(endpoint\.predict\(instances=\[\[5\.1, 3\.5, 1\.4, 0\.2\], .*\]\)\.predictions\)$/,
      ),
    ]);
    expect(script.join('\n')).toContain(
      'serving_container_image_uri="198.19.254.1:5000/endpoint-operator/server:abc")',
    );
  });
});
