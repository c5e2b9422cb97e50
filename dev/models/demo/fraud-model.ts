/**
 * A small, real model for the demos: a card-fraud scorer, logistic regression over five features of a
 * payment. Two versions (v1 and a retrained v2 with other coefficients), so a 70/30 split shows in the
 * answers. Explanations are exact for the model: each feature's contribution to the logit,
 * w·(x − baseline)/scale, rescaled so the attributions sum to the change in probability from the
 * baseline payment (a typical one, the feature means) to this one — the same additivity Vertex AI's
 * attributions have (Σ featureAttributions = instanceOutputValue − baselineOutputValue).
 */

export const FEATURES = ['amount', 'hourOfDay', 'foreignMerchant', 'cardPresent', 'transactionsLast24h'] as const;
export type Feature = (typeof FEATURES)[number];

export interface FraudModelVersion {
  readonly version: string;
  readonly intercept: number;
  /** Coefficients on standardized features. */
  readonly weights: Readonly<Record<Feature, number>>;
}

/** Means and scales of the features over the (synthetic) training payments: the baseline of explanations. */
const MEAN: Readonly<Record<Feature, number>> = {
  amount: 80,
  hourOfDay: 14,
  foreignMerchant: 0.1,
  cardPresent: 0.7,
  transactionsLast24h: 3,
};
const SCALE: Readonly<Record<Feature, number>> = {
  amount: 150,
  hourOfDay: 6,
  foreignMerchant: 0.3,
  cardPresent: 0.46,
  transactionsLast24h: 4,
};

export const FRAUD_MODEL_VERSIONS: Readonly<Record<'v1' | 'v2', FraudModelVersion>> = {
  v1: {
    version: '1',
    intercept: -3.2,
    weights: { amount: 1.1, hourOfDay: -0.35, foreignMerchant: 0.9, cardPresent: -0.8, transactionsLast24h: 0.6 },
  },
  v2: {
    version: '2',
    intercept: -3.5,
    weights: { amount: 1.4, hourOfDay: -0.5, foreignMerchant: 1.2, cardPresent: -1.1, transactionsLast24h: 0.75 },
  },
};

export type Payment = Readonly<Record<Feature, number>>;

export class InstanceError extends Error {}

/** An instance as a payment: an object with the five features (booleans count as 0/1), or an array of five numbers in FEATURES order. */
export function toPayment(instance: unknown, where: string): Payment {
  const values: Partial<Record<Feature, number>> = {};
  if (Array.isArray(instance)) {
    if (instance.length !== FEATURES.length)
      throw new InstanceError(
        `${where} has ${instance.length} values; expected ${FEATURES.length}: ${FEATURES.join(', ')}`,
      );
    FEATURES.forEach((f, i) => (values[f] = numberOf(instance[i], `${where}[${i}]`)));
  } else if (typeof instance === 'object' && instance !== null) {
    const obj = instance as Record<string, unknown>;
    for (const f of FEATURES) {
      if (!(f in obj)) throw new InstanceError(`${where}.${f} is missing; the features are ${FEATURES.join(', ')}`);
      values[f] = numberOf(obj[f], `${where}.${f}`);
    }
  } else {
    throw new InstanceError(
      `${where} must be an object with ${FEATURES.join(', ')} or an array of ${FEATURES.length} numbers`,
    );
  }
  return values as Payment;
}

function numberOf(v: unknown, where: string): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  throw new InstanceError(`${where} must be a number, got ${JSON.stringify(v)}`);
}

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

function contributions(model: FraudModelVersion, p: Payment): Record<Feature, number> {
  const out = {} as Record<Feature, number>;
  for (const f of FEATURES) out[f] = (model.weights[f] * (p[f] - MEAN[f])) / SCALE[f];
  return out;
}

export function fraudProbability(model: FraudModelVersion, p: Payment): number {
  const c = contributions(model, p);
  return sigmoid(model.intercept + FEATURES.reduce((s, f) => s + c[f], 0));
}

export interface FraudPrediction {
  readonly fraudProbability: number;
  readonly label: 'fraud' | 'legitimate';
}

export function predict(model: FraudModelVersion, p: Payment): FraudPrediction {
  const probability = fraudProbability(model, p);
  return { fraudProbability: round(probability), label: probability >= 0.5 ? 'fraud' : 'legitimate' };
}

/** Vertex AI's Explanation shape: one attribution for the model's one output. */
export interface FraudExplanation {
  readonly attributions: ReadonlyArray<{
    baselineOutputValue: number;
    instanceOutputValue: number;
    featureAttributions: Record<Feature, number>;
    outputIndex: number[];
    outputName: string;
    approximationError: number;
  }>;
}

export function explain(model: FraudModelVersion, p: Payment): FraudExplanation {
  const c = contributions(model, p);
  const total = FEATURES.reduce((s, f) => s + c[f], 0);
  const baseline = sigmoid(model.intercept);
  const instance = sigmoid(model.intercept + total);
  const featureAttributions = {} as Record<Feature, number>;
  for (const f of FEATURES) featureAttributions[f] = total === 0 ? 0 : round(((instance - baseline) * c[f]) / total);
  return {
    attributions: [
      {
        baselineOutputValue: round(baseline),
        instanceOutputValue: round(instance),
        featureAttributions,
        outputIndex: [0],
        outputName: 'fraudProbability',
        approximationError: 0,
      },
    ],
  };
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
