/** The field manager of the operator's own writes (server-side apply, finalizers, status). */
export const FIELD_MANAGER = 'endpoint-operator';
