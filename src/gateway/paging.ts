/**
 * Google's list paging (AIP-158), one implementation for every list the gateway serves (Service Directory's
 * ListEndpoints, Vertex's ListEndpoints): items in name order, `pageSize` (0 = the default, capped at the
 * maximum), and an opaque `pageToken` that resumes after the last name of the previous page and is bound to
 * the filter it was issued for.
 */
import { renderValue } from '../api/common/field-error.js';
import { GoogleApiError } from './google-errors.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export interface PageRequest {
  /** The filter's text ('' for none): a token only resumes the listing it came from. */
  readonly filter: string;
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
}

interface PageToken {
  /** Name of the last item of the previous page. */
  readonly a: string;
  /** The filter the token was issued for. */
  readonly f: string;
}

function encodeToken(t: PageToken): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeToken(token: string, filter: string): PageToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const t = parsed as Partial<PageToken> | undefined;
  if (typeof t !== 'object' || t === null || typeof t.a !== 'string' || typeof t.f !== 'string') {
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `pageToken: ${renderValue(token)} is not a token this API issued; pass nextPageToken of the previous response, or omit it for the first page`,
    );
  }
  if (t.f !== filter)
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      'pageToken: the token was issued for another filter; send the same filter with every page',
    );
  return { a: t.a, f: t.f };
}

/** Checks the request before anything is looked up, so a bad token or size is refused whether or not the parent exists. */
export function checkPageRequest(req: PageRequest): { size: number; after: string | undefined } {
  if (req.pageSize !== undefined && (!Number.isInteger(req.pageSize) || req.pageSize < 0)) {
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `pageSize: ${String(req.pageSize)} is invalid; it must be a non-negative integer (0 means the default, ${DEFAULT_PAGE_SIZE})`,
    );
  }
  const size =
    req.pageSize === undefined || req.pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(req.pageSize, MAX_PAGE_SIZE);
  const after =
    req.pageToken !== undefined && req.pageToken !== '' ? decodeToken(req.pageToken, req.filter).a : undefined;
  return { size, after };
}

/** One page of `items` (sorted by `nameOf`) that `matches`, and the token of the next when more remain. */
export function pageOf<T>(
  items: Iterable<T>,
  nameOf: (item: T) => string,
  matches: (item: T) => boolean,
  req: PageRequest,
): { page: T[]; nextPageToken: string | undefined } {
  const { size, after } = checkPageRequest(req);
  const page: T[] = [];
  let more = false;
  for (const item of items) {
    if (after !== undefined && nameOf(item) <= after) continue;
    if (!matches(item)) continue;
    if (page.length === size) {
      more = true;
      break;
    }
    page.push(item);
  }
  const last = page[page.length - 1];
  return {
    page,
    nextPageToken: more && last !== undefined ? encodeToken({ a: nameOf(last), f: req.filter }) : undefined,
  };
}
