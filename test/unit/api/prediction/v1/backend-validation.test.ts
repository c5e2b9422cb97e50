import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../../../../src/api/common/field-error.js';
import { deployedModel, fields, validateModel } from './fixtures.js';

type Json = Record<string, unknown>;

const service = { service: { name: 'fraud-gbt', port: 8080 }, protocol: 'KServeV1', modelName: 'fraud-gbt' };

function errorsAt(backend: unknown): string[] {
  return fields(validateModel(deployedModel({ backend })));
}

function messages(backend: unknown): string[] {
  return validateModel(deployedModel({ backend })).errors.map(formatFieldError);
}

function withService(patch: Json): Json {
  return { ...service, service: { ...service.service, ...patch } };
}

describe('DeployedModel spec.backend', () => {
  it('is optional, and accepts a Service by port number or name, or a URL, in either protocol', () => {
    expect(fields(validateModel(deployedModel()))).toEqual([]);
    expect(errorsAt(service)).toEqual([]);
    expect(errorsAt(withService({ port: 'http' }))).toEqual([]);
    expect(errorsAt(withService({ port: 'h2c-predict' }))).toEqual([]);
    expect(
      errorsAt({
        url: 'https://models.example.com:8443/serving',
        protocol: 'OpenInferenceV2',
        modelName: 'fraud_dnn.v2',
      }),
    ).toEqual([]);
    expect(errorsAt({ url: 'http://[::1]:9000', protocol: 'KServeV1', modelName: 'm' })).toEqual([]);
  });

  it('needs exactly one of service and url', () => {
    expect(errorsAt({ protocol: 'KServeV1', modelName: 'm' })).toEqual(['spec.backend']);
    expect(errorsAt({ ...service, url: 'https://models.example.com' })).toEqual(['spec.backend.url']);
    expect(messages({ ...service, url: 'https://models.example.com' })[0]).toContain('exactly one of the two');
  });

  it('needs protocol and modelName, from the known protocols and a URL-safe name', () => {
    expect(errorsAt({ ...service, protocol: undefined })).toEqual(['spec.backend.protocol']);
    expect(errorsAt({ ...service, protocol: 'TritonGRPC' })).toEqual(['spec.backend.protocol']);
    expect(messages({ ...service, protocol: 'TritonGRPC' })[0]).toContain('"KServeV1", "OpenInferenceV2"');
    expect(errorsAt({ ...service, modelName: undefined })).toEqual(['spec.backend.modelName']);
    for (const bad of ['', 'a/b', '-m', 'm.', 'fraud gbt'])
      expect(errorsAt({ ...service, modelName: bad }), bad).toContain('spec.backend.modelName');
  });

  it('checks the Service name and port, naming the value and the rule', () => {
    expect(errorsAt(withService({ name: 'Fraud_GBT' }))).toEqual(['spec.backend.service.name']);
    expect(errorsAt(withService({ name: '1fraud' }))).toEqual(['spec.backend.service.name']);
    expect(errorsAt({ ...service, service: { name: 'fraud-gbt' } })).toEqual(['spec.backend.service.port']);
    for (const bad of [0, 65536, 1.5, true, -1, 'HTTP', 'http_2', 'a-very-long-port-name', 'web--api', '-http']) {
      expect(errorsAt(withService({ port: bad })), String(bad)).toContain('spec.backend.service.port');
    }
    expect(messages(withService({ port: 70000 }))).toEqual([
      'spec.backend.service.port: Invalid value: 70000: must be a port number from 1 to 65535',
    ]);
    expect(messages(withService({ port: true }))[0]).toContain(
      'must be a port number (1..65535) or the name of a port of the Service',
    );
  });

  it('refuses a port number written as a string, saying to unquote it', () => {
    expect(messages(withService({ port: '8080' }))).toEqual([
      'spec.backend.service.port: Invalid value: "8080": a port name must contain a letter; for the port number write it unquoted (port: 8080)',
    ]);
  });

  it('takes only http and https URLs without query, fragment or credentials', () => {
    for (const bad of [
      'ftp://models.example.com',
      'models.example.com',
      'https://models.example.com/?v=1',
      'https://models.example.com/#x',
      'https://',
      'http://[::1',
    ]) {
      expect(errorsAt({ ...service, service: undefined, url: bad }), bad).toEqual(['spec.backend.url']);
    }
    const withCredentials = messages({
      ...service,
      service: undefined,
      url: 'https://gateway:s3cret@models.example.com',
    });
    expect(withCredentials).toHaveLength(1);
    expect(withCredentials[0]).toContain('must not contain credentials');
    expect(withCredentials[0]).not.toContain('s3cret');
  });

  it('reports every bad field of the backend at once', () => {
    expect(new Set(errorsAt({ service: { name: 'X', port: 0 }, protocol: 'v3', modelName: '/' }))).toEqual(
      new Set([
        'spec.backend.service.name',
        'spec.backend.service.port',
        'spec.backend.protocol',
        'spec.backend.modelName',
      ]),
    );
    expect(errorsAt('svc')).toEqual(['spec.backend']);
  });
});
