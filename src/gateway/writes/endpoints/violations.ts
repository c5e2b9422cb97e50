/**
 * A refused field of a request, as google.rpc.BadRequest.FieldViolation carries it: the REQUEST's field path
 * in Google's snake_case form (`traffic_split["0"]`, `deployed_model.id`) and what is wrong with it.
 */
export interface RequestViolation {
  readonly field: string;
  readonly description: string;
}
