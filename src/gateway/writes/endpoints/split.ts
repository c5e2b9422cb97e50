/**
 * The endpoint's spec.trafficSplit that DeployModel and UndeployModel write, from the request's `traffic_split`
 * (endpoint_service.proto): a non-empty map replaces the endpoint's split; an empty one leaves it as it is. In
 * DeployModel the key "0" stands for the model being deployed, whose id is only known once it is chosen. In
 * UndeployModel a model can go only when it has no traffic after the call, and the last one leaves the split
 * empty. Pure.
 */
import { renderValue } from '../../../api/common/field-error.js';
import { compareIds } from '../../../api/prediction/v1/traffic.js';
import { DEPLOYED_MODEL_ID } from '../../../api/prediction/v1/names.js';
import type { FieldViolation } from '../../google-errors.js';

export type Split = Readonly<Record<string, number>>;

/** The new split, or undefined to leave the endpoint's as it is; with the request's refused fields. */
export interface SplitChange {
  readonly split: Split | undefined;
  readonly violations: readonly FieldViolation[];
}

/** The deploy placeholder: "To refer to the ID of the just being deployed Model, a "0" should be used". */
export const NEW_MODEL_KEY = '0';

const at = (key: string) => `traffic_split[${JSON.stringify(key)}]`;

function percentageProblems(requested: Split): FieldViolation[] {
  const out: FieldViolation[] = [];
  let sum = 0;
  for (const [key, value] of Object.entries(requested)) {
    if (!Number.isInteger(value) || value < 0 || value > 100)
      out.push({ field: at(key), description: `${renderValue(value)}: must be an integer percentage from 0 to 100` });
    else sum += value;
  }
  if (out.length === 0 && sum !== 100)
    out.push({
      field: 'traffic_split',
      description: `the percentages must add up to 100; they add up to ${sum}`,
    });
  return out;
}

function sorted(split: Record<string, number>): Split {
  return Object.fromEntries(Object.entries(split).sort(([a], [b]) => compareIds(a, b)));
}

function known(ids: ReadonlySet<string>): string {
  return ids.size === 0 ? 'none' : [...ids].sort(compareIds).join(', ');
}

/**
 * DeployModel's split: `requested` with "0" (or the new model's own id) meaning `newId`; every other key must be a
 * model deployed on the endpoint (`deployedIds`).
 */
export function deploySplit(requested: Split, newId: string, deployedIds: ReadonlySet<string>): SplitChange {
  if (Object.keys(requested).length === 0) return { split: undefined, violations: [] };
  const violations = percentageProblems(requested);
  if (requested[NEW_MODEL_KEY] !== undefined && requested[newId] !== undefined && newId !== NEW_MODEL_KEY)
    violations.push({
      field: at(newId),
      description: `the model being deployed is named twice, as "0" and as its id ${newId}: use one`,
    });
  const split: Record<string, number> = {};
  for (const [key, value] of Object.entries(requested)) {
    if (key === NEW_MODEL_KEY || key === newId) {
      split[newId] = value;
      continue;
    }
    if (!DEPLOYED_MODEL_ID.test(key))
      violations.push({ field: at(key), description: 'keys must be deployed model ids (1 to 10 digits) or "0"' });
    else if (!deployedIds.has(key))
      violations.push({
        field: at(key),
        description: `${key} is not a model deployed on this endpoint (deployed: ${known(deployedIds)}); use "0" for the model being deployed`,
      });
    split[key] = value;
  }
  return { split: sorted(split), violations };
}

/** Why the undeploy cannot happen as asked (FAILED_PRECONDITION), beside the request's refused fields. */
export interface UndeployChange extends SplitChange {
  readonly stillServing: string | undefined;
}

/**
 * UndeployModel's split for removing `id`: `requested` (which may give `id` 0, and must cover only the models that
 * remain), else the endpoint's `current` split without `id`, which must then give `id` no traffic.
 */
export function undeploySplit(
  current: Split | undefined,
  requested: Split,
  id: string,
  remainingIds: ReadonlySet<string>,
): UndeployChange {
  if (remainingIds.size === 0) return { split: {}, violations: [], stillServing: undefined };
  if (Object.keys(requested).length > 0) {
    const violations = percentageProblems(requested);
    const split: Record<string, number> = {};
    for (const [key, value] of Object.entries(requested)) {
      if (key === id) {
        if (value !== 0)
          violations.push({
            field: at(key),
            description: `${key} is the model being undeployed: it may only be given 0`,
          });
        continue;
      }
      if (!remainingIds.has(key))
        violations.push({
          field: at(key),
          description: `${key} is not a model that stays deployed on this endpoint (staying: ${known(remainingIds)})`,
        });
      split[key] = value;
    }
    return { split: sorted(split), violations, stillServing: undefined };
  }
  const share = current?.[id] ?? 0;
  if (share > 0)
    return {
      split: undefined,
      violations: [],
      stillServing: `deployed model ${id} receives ${share}% of the endpoint's traffic: give traffic_split with the models that stay, or move its traffic away first`,
    };
  if (current === undefined || !(id in current)) return { split: undefined, violations: [], stillServing: undefined };
  const rest: Record<string, number> = { ...current };
  delete rest[id];
  return { split: sorted(rest), violations: [], stillServing: undefined };
}
