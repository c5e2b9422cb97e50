import { z } from 'zod';
import type { PrinterColumn } from '../common/kind.js';

export const REGISTRY_GROUP = 'registry.endpoint-operator.dev';
export const REGISTRY_CATEGORIES: readonly string[] = ['endpoint-operator'];

export const observedGenerationSchema = z
  .number()
  .int()
  .min(0)
  .optional()
  .meta({ description: 'observedGeneration is the metadata.generation the status was computed from; optional.' });

/** Annotation maps in status (already validated in spec). */
export const stringMapSchema = z.record(z.string(), z.string());

export const readyColumns: readonly PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
];
export const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
