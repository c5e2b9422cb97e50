export interface PredictionRecord {
  readonly namespace: string;
  readonly endpoint: string;
  readonly resourceName: string;
  readonly deployedModelId: string | undefined;
  readonly method: string;
  readonly code: number;
  readonly latencyMs: number;
  readonly request: Buffer | undefined;
  readonly response: Buffer | string | undefined;
  /** Content types of the bodies (CloudEvents carry them); JSON when absent. */
  readonly requestContentType?: string | undefined;
  readonly responseContentType?: string | undefined;
}
