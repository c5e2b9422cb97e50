/**
 * The fraud model behind KServe's V1 protocol: `GET /v1/models`, `GET /v1/models/{name}` (readiness),
 * `POST /v1/models/{name}:predict` {instances} → {predictions}, `POST /v1/models/{name}:explain`
 * {instances} → {explanations, predictions} with per-feature attributions.
 */
import type http from 'node:http';
import { explain, InstanceError, predict, toPayment, type FraudModelVersion } from './fraud-model.js';
import { readJson, sendJson } from './http-json.js';

export function kserveV1Handler(modelName: string, model: FraudModelVersion): http.RequestListener {
  const base = `/v1/models/${modelName}`;
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'GET' && path === '/v1/models') return sendJson(res, 200, { models: [modelName] });
    if (req.method === 'GET' && path === base) return sendJson(res, 200, { name: modelName, ready: true });
    const verb = path === `${base}:predict` ? 'predict' : path === `${base}:explain` ? 'explain' : undefined;
    if (req.method !== 'POST' || verb === undefined)
      return sendJson(res, 404, {
        error: `no route ${req.method ?? ''} ${path}; model ${modelName} serves ${base}:predict and ${base}:explain`,
      });
    readJson(req).then(
      (body) => {
        const instances = (body as { instances?: unknown } | null)?.instances;
        if (!Array.isArray(instances)) return sendJson(res, 400, { error: 'instances must be a list' });
        try {
          const payments = instances.map((inst, i) => toPayment(inst, `instances[${i}]`));
          const predictions = payments.map((p) => predict(model, p));
          if (verb === 'predict') return sendJson(res, 200, { predictions });
          return sendJson(res, 200, { predictions, explanations: payments.map((p) => explain(model, p)) });
        } catch (err) {
          if (err instanceof InstanceError) return sendJson(res, 400, { error: err.message });
          throw err;
        }
      },
      (err: unknown) => sendJson(res, 400, { error: `invalid JSON: ${(err as Error).message}` }),
    );
  };
}
