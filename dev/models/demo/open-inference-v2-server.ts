/**
 * The fraud model behind the Open Inference Protocol (KServe V2): health, model metadata and
 * readiness, `POST /v2/models/{name}/infer` and `POST /v2/models/{name}/explain` (an extra output
 * `explanation`, BYTES, one JSON explanation per instance, as MLServer's explainers answer).
 *
 * Inputs: one tensor per feature (named as the feature, shape [n] or [n,1]), or one tensor of shape
 * [n,5] with the features in FEATURES order (any name; the gateway names it `instances`).
 * Outputs: `fraudProbability` FP64 [n] and `label` BYTES [n].
 */
import type http from 'node:http';
import {
  explain,
  FEATURES,
  InstanceError,
  predict,
  toPayment,
  type FraudModelVersion,
  type Payment,
} from './fraud-model.js';
import { readJson, sendJson } from './http-json.js';

interface Tensor {
  name: string;
  shape: number[];
  datatype: string;
  data: unknown[];
}

function isTensor(v: unknown): v is Tensor {
  const t = v as Tensor;
  return (
    typeof t === 'object' && t !== null && typeof t.name === 'string' && Array.isArray(t.shape) && Array.isArray(t.data)
  );
}

/** The payments an inference request carries. */
export function paymentsOf(inputs: readonly Tensor[]): Payment[] {
  const byName = new Map(inputs.map((t) => [t.name, t]));
  if (FEATURES.every((f) => byName.has(f))) {
    const n = byName.get(FEATURES[0])?.shape[0] ?? 0;
    const payments: Payment[] = [];
    for (let i = 0; i < n; i++) {
      const obj: Record<string, unknown> = {};
      for (const f of FEATURES) {
        const t = byName.get(f) as Tensor;
        if (t.shape[0] !== n || t.data.length !== n)
          throw new InstanceError(`input "${f}" must have shape [${n}] or [${n},1] like "${FEATURES[0]}"`);
        obj[f] = t.data[i];
      }
      payments.push(toPayment(obj, `inputs[*][${i}]`));
    }
    return payments;
  }
  const only = inputs.length === 1 ? inputs[0] : undefined;
  if (only !== undefined && only.shape.length === 2 && only.shape[1] === FEATURES.length) {
    const n = only.shape[0] ?? 0;
    if (only.data.length !== n * FEATURES.length)
      throw new InstanceError(
        `input "${only.name}" has ${only.data.length} elements for shape [${only.shape.join(',')}]`,
      );
    return Array.from({ length: n }, (_, i) =>
      toPayment(only.data.slice(i * FEATURES.length, (i + 1) * FEATURES.length), `${only.name}[${i}]`),
    );
  }
  throw new InstanceError(
    `inputs must be one tensor per feature (${FEATURES.join(', ')}) or one tensor of shape [n,${FEATURES.length}]`,
  );
}

export function openInferenceV2Handler(modelName: string, model: FraudModelVersion): http.RequestListener {
  const base = `/v2/models/${modelName}`;
  const metadata = {
    name: modelName,
    versions: [model.version],
    platform: 'endpoint-operator-demo',
    inputs: FEATURES.map((f) => ({ name: f, datatype: 'FP64', shape: [-1] })),
    outputs: [
      { name: 'fraudProbability', datatype: 'FP64', shape: [-1] },
      { name: 'label', datatype: 'BYTES', shape: [-1] },
    ],
  };
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'GET') {
      if (path === '/v2/health/live' || path === '/v2/health/ready')
        return sendJson(res, 200, { live: true, ready: true });
      if (path === base) return sendJson(res, 200, metadata);
      if (path === `${base}/ready`) return sendJson(res, 200, { name: modelName, ready: true });
    }
    const verb = path === `${base}/infer` ? 'infer' : path === `${base}/explain` ? 'explain' : undefined;
    if (req.method !== 'POST' || verb === undefined)
      return sendJson(res, 404, { error: `no route ${req.method ?? ''} ${path}` });
    readJson(req).then(
      (body) => {
        const request = body as { id?: unknown; inputs?: unknown } | null;
        if (!Array.isArray(request?.inputs) || !request.inputs.every(isTensor))
          return sendJson(res, 400, { error: 'inputs must be a list of tensors {name, shape, datatype, data}' });
        try {
          const payments = paymentsOf(request.inputs);
          const predictions = payments.map((p) => predict(model, p));
          const n = payments.length;
          const outputs: Tensor[] = [
            {
              name: 'fraudProbability',
              shape: [n],
              datatype: 'FP64',
              data: predictions.map((p) => p.fraudProbability),
            },
            { name: 'label', shape: [n], datatype: 'BYTES', data: predictions.map((p) => p.label) },
          ];
          if (verb === 'explain')
            outputs.push({
              name: 'explanation',
              shape: [n],
              datatype: 'BYTES',
              data: payments.map((p) => JSON.stringify(explain(model, p))),
            });
          return sendJson(res, 200, {
            model_name: modelName,
            model_version: model.version,
            ...(typeof request.id === 'string' ? { id: request.id } : {}),
            outputs,
          });
        } catch (err) {
          if (err instanceof InstanceError) return sendJson(res, 400, { error: err.message });
          throw err;
        }
      },
      (err: unknown) => sendJson(res, 400, { error: `invalid JSON: ${(err as Error).message}` }),
    );
  };
}
