/**
 * The chart renderer (test/support/helm.ts) behaves as Helm's engine where a home-made one would
 * not: values are JSON numbers (a big integer prints as 1e+06), a missing key prints nothing,
 * sprig's functions exist but env does not, and include, tpl, required and toYaml work as in Helm.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureHelmRenderer, renderChart } from '../../support/helm.js';

const dir = mkdtempSync(join(tmpdir(), 'eo-helm-render-test-'));
let renderer: string;

/** Renders one ConfigMap whose `data` block is `data` (template text, indented two spaces). */
async function renderData(data: string, values: unknown = {}, helpers = ''): Promise<Record<string, string>> {
  const chart = mkdtempSync(join(dir, 'chart-'));
  mkdirSync(join(chart, 'templates'));
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: probe\nversion: 0.0.1\nappVersion: "9.9"\n');
  writeFileSync(join(chart, 'values.yaml'), 'big: 1000000\nlist: [a, b]\nmap: {x: 1}\n');
  writeFileSync(join(chart, 'templates/_helpers.tpl'), helpers);
  writeFileSync(join(chart, 'templates/cm.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n${data}\n`);
  const rendered = await renderChart(renderer, chart, values);
  expect(rendered.manifests).toHaveLength(1);
  return (rendered.manifests[0]?.object as { data: Record<string, string> }).data;
}

describe('the Helm engine renderer', () => {
  beforeAll(async () => {
    renderer = await ensureHelmRenderer();
  }, 600_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints values as Helm does: numbers are float64, a missing key is empty', async () => {
    expect(await renderData('  big: "{{ .Values.big }}"\n  missing: "{{ .Values.nothing }}"\n  chart: "{{ .Chart.Name }}-{{ .Chart.AppVersion }}"')).toEqual({ big: '1e+06', missing: '', chart: 'probe-9.9' });
  });

  it('lays user values over values.yaml: maps merge, lists replace, null deletes', async () => {
    const data = await renderData('  v: {{ toJson .Values | quote }}', { list: ['c'], map: { y: 2 }, big: null });
    expect(JSON.parse(data['v'] ?? '')).toEqual({ list: ['c'], map: { x: 1, y: 2 } });
  });

  it('has sprig, include, tpl and toYaml', async () => {
    const helpers = '{{- define "probe.name" -}}{{ .prefix }}-{{ .Chart.Name | upper }}{{- end }}';
    const data = await renderData(
      '  a: {{ include "probe.name" (dict "prefix" "p" "Chart" .Chart) | quote }}\n  b: {{ tpl "{{ .Values.big | int }}" . | quote }}\n  c: {{ toYaml .Values.map | quote }}\n  d: {{ list 3 1 2 | sortAlpha | join "," | quote }}',
      {},
      helpers,
    );
    expect(data).toEqual({ a: 'p-PROBE', b: '1000000', c: 'x: 1', d: '1,2,3' });
  });

  it('fails on required values and on env, which Helm removes from sprig', async () => {
    await expect(renderData('  a: {{ required "a needs .Values.a" .Values.a }}')).rejects.toThrow(/a needs \.Values\.a/);
    await expect(renderData('  a: {{ env "HOME" }}')).rejects.toThrow(/function "env" not defined/);
  });
});
