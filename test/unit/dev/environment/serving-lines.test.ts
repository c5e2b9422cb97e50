import { describe, expect, it } from 'vitest';
import { servingLines } from '../../../../dev/environment/serving-lines.js';

describe('servingLines', () => {
  it("names each containerSpec model's Deployment and available replicas, and says the pods are simulated", () => {
    const dm = {
      metadata: { name: 'churn-xgb-v3' },
      status: {
        serving: { deployment: 'dm-churn-xgb-v3', service: 'dm-churn-xgb-v3' },
        replicaCount: 2,
        availableReplicaCount: 2,
        deploymentStage: 'FINISHING_UP',
      },
    };
    const lines = servingLines([dm, { metadata: { name: 'backend-model' }, status: {} }]);
    expect(lines).toContain(
      '  DeployedModel churn-xgb-v3: Deployment dm-churn-xgb-v3 2/2 replicas available (FINISHING_UP), Service dm-churn-xgb-v3',
    );
    expect(lines.join('\n')).toContain('Their pods are simulated');
    expect(lines.join('\n')).not.toContain('backend-model');
    expect(servingLines([{ metadata: { name: 'x' } }])).toEqual([]);
  });

  it('says the pods run on the real node with --real-node', () => {
    const dm = { metadata: { name: 'churn-xgb-v3' }, status: { serving: { deployment: 'dm-churn-xgb-v3' } } };
    const text = servingLines([dm], true).join('\n');
    expect(text).toContain('Their pods run on the real node');
    expect(text).not.toContain('simulated');
  });
});
