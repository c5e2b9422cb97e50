export * from './field-error.js';
export * from './field-path.js';
export * from './decode.js';
export * from './kind.js';
export * from './text.js';
export * from './object-meta.js';
export * from './conditions.js';
