/**
 * Service Directory's endpoint filter (`endpointFilter` of :resolve, `filter` of ListEndpoints), a subset
 * of Google's filtering language (AIP-160): `<field> <operator> <value>` restrictions over `name`,
 * `address`, `port` and `annotations.<key>`, joined by `AND`, `OR`, `NOT` and parentheses.
 *
 * - Precedence is AIP-160's: `NOT` binds tightest, then `OR`, then `AND`, so `a AND b OR c` is
 *   `a AND (b OR c)`. Connectors are upper case; juxtaposition (AIP-160's implicit AND) is refused as a
 *   syntax error, so a lower-case `and` is reported rather than silently read as a field.
 * - Operators `=`, `!=`, `<`, `<=`, `>`, `>=` compare strings by code unit and `port` as an integer;
 *   `:` (has) is equality, `*` as its value means "present", and `annotations:KEY` tests for a key.
 *   A field alone (`annotations.owner`) is a presence test.
 * - A comparison on an annotation the endpoint lacks is false, whatever the operator (Service
 *   Directory: `annotations.owner!=sd` selects endpoints that have an owner other than sd).
 * - Values are bare words (no spaces, parentheses, quotes or operator characters) or quoted with `"`
 *   or `'` (backslash escapes the quote and itself); an IPv6 address must be quoted.
 * - A field the endpoint does not have (`doesnotexist.foo=bar`) makes the whole filter match nothing,
 *   as Service Directory answers such a filter with an empty list.
 * Syntax errors throw FilterSyntaxError with the 1-based character position; so do a filter longer than
 * MAX_FILTER_LENGTH and nesting deeper than MAX_FILTER_DEPTH, checked as the text is read (the parser
 * recurses only into parentheses and NOT, so it never gets near the stack's limit).
 */

/** Longest filter accepted (characters): tokens, the tree and evaluation are all bounded by it. */
export const MAX_FILTER_LENGTH = 4096;
/** Deepest nesting of parentheses and NOT (protobuf's recursion limit, as for JSON bodies). */
export const MAX_FILTER_DEPTH = 100;

export interface FilterableEndpoint {
  readonly name: string;
  /** '' when the endpoint has none (proto3 default). */
  readonly address: string;
  /** 0 when the endpoint has none. */
  readonly port: number;
  readonly annotations: Readonly<Record<string, string>>;
}

export class FilterSyntaxError extends Error {
  override readonly name = 'FilterSyntaxError';
  constructor(
    /** 1-based position of the offending character in the filter. */
    readonly position: number,
    readonly detail: string,
  ) {
    super(`invalid filter at position ${position}: ${detail}`);
  }
}

export type Operator = '=' | '!=' | '<' | '<=' | '>' | '>=' | ':';

type Field =
  | { readonly kind: 'name' | 'address' | 'port' | 'annotations' }
  | { readonly kind: 'annotation'; readonly key: string }
  | { readonly kind: 'unknown' };

type Node =
  | { readonly type: 'and' | 'or'; readonly operands: readonly Node[] }
  | { readonly type: 'not'; readonly operand: Node }
  | { readonly type: 'present'; readonly field: Field }
  | {
      readonly type: 'compare';
      readonly field: Field;
      readonly op: Operator;
      readonly value: string;
      readonly number: number;
    };

export interface CompiledFilter {
  /** The filter's text, as given. */
  readonly text: string;
  matches(endpoint: FilterableEndpoint): boolean;
}

// ---- lexer ----

type Token =
  | { readonly kind: 'word'; readonly text: string; readonly pos: number }
  | { readonly kind: 'string'; readonly text: string; readonly pos: number }
  | { readonly kind: 'op'; readonly text: Operator; readonly pos: number }
  | { readonly kind: '(' | ')' | 'end'; readonly pos: number };

const OPERATORS: readonly Operator[] = ['<=', '>=', '!=', '<', '>', '=', ':'];
const WORD_STOP = /[\s()"'<>=!:]/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? '';
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const pos = i + 1;
    if (c === '(' || c === ')') {
      tokens.push({ kind: c, pos });
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let value = '';
      let j = i + 1;
      for (;;) {
        if (j >= text.length)
          throw new FilterSyntaxError(pos, `unterminated string: the ${c} opened here has no closing ${c}`);
        const d = text[j] ?? '';
        if (d === '\\' && j + 1 < text.length) {
          value += text[j + 1];
          j += 2;
        } else if (d === c) {
          break;
        } else {
          value += d;
          j++;
        }
      }
      tokens.push({ kind: 'string', text: value, pos });
      i = j + 1;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op !== undefined) {
      tokens.push({ kind: 'op', text: op, pos });
      i += op.length;
      continue;
    }
    if (c === '!') throw new FilterSyntaxError(pos, "unexpected '!' (the not-equal operator is '!=', negation is NOT)");
    let j = i;
    while (j < text.length && !WORD_STOP.test(text[j] ?? '')) j++;
    tokens.push({ kind: 'word', text: text.slice(i, j), pos });
    i = j;
  }
  tokens.push({ kind: 'end', pos: text.length + 1 });
  return tokens;
}

// ---- parser ----

function describe(t: Token): string {
  switch (t.kind) {
    case 'end':
      return 'the end of the filter';
    case 'word':
      return JSON.stringify(t.text);
    case 'string':
      return `the string ${JSON.stringify(t.text)}`;
    case 'op':
      return `'${t.text}'`;
    default:
      return `'${t.kind}'`;
  }
}

const isKeyword = (t: Token, word: 'AND' | 'OR' | 'NOT'): boolean => t.kind === 'word' && t.text === word;

class Parser {
  private i = 0;
  private depth = 0;
  unknownField = false;
  constructor(private readonly tokens: readonly Token[]) {}

  private peek(): Token {
    return this.tokens[this.i] ?? { kind: 'end', pos: 0 };
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'end') this.i++;
    return t;
  }

  parseFilter(): Node {
    const node = this.expression();
    const t = this.peek();
    if (t.kind === ')') throw new FilterSyntaxError(t.pos, "unbalanced ')': no '(' to close");
    if (t.kind !== 'end')
      throw new FilterSyntaxError(
        t.pos,
        `expected AND, OR or the end of the filter, found ${describe(t)} (connectors are upper case; quote a value that holds spaces)`,
      );
    return node;
  }

  // expression := factor { AND factor }. AND and OR chains are n-ary nodes, so a chain of 1,000
  // connectors is one level deep, not 1,000 (evaluation recurses only into parentheses and NOT).
  private expression(): Node {
    const operands = [this.factor()];
    while (isKeyword(this.peek(), 'AND')) {
      this.next();
      operands.push(this.factor());
    }
    return operands.length === 1 ? (operands[0] as Node) : { type: 'and', operands };
  }

  // factor := term { OR term }
  private factor(): Node {
    const operands = [this.term()];
    while (isKeyword(this.peek(), 'OR')) {
      this.next();
      operands.push(this.term());
    }
    return operands.length === 1 ? (operands[0] as Node) : { type: 'or', operands };
  }

  /** Parentheses and NOTs open here; the recursion (and the tree's depth) stops at MAX_FILTER_DEPTH. */
  private nest(t: Token): void {
    if (++this.depth > MAX_FILTER_DEPTH)
      throw new FilterSyntaxError(
        t.pos,
        `the filter nests parentheses and NOT more than ${MAX_FILTER_DEPTH} levels deep; the limit is ${MAX_FILTER_DEPTH}`,
      );
  }

  // term := NOT term | '(' expression ')' | restriction
  private term(): Node {
    const t = this.peek();
    if (isKeyword(t, 'NOT')) {
      this.next();
      this.nest(t);
      const operand = this.term();
      this.depth--;
      return { type: 'not', operand };
    }
    if (t.kind === '(') {
      this.next();
      this.nest(t);
      const inner = this.expression();
      this.depth--;
      const close = this.next();
      if (close.kind !== ')')
        throw new FilterSyntaxError(
          close.pos,
          `expected ')' to close the '(' at position ${t.pos}, found ${describe(close)}`,
        );
      return inner;
    }
    return this.restriction();
  }

  // restriction := field [ operator value ]
  private restriction(): Node {
    const t = this.next();
    if (t.kind !== 'word' || isKeyword(t, 'AND') || isKeyword(t, 'OR')) {
      throw new FilterSyntaxError(
        t.pos,
        `expected a field (name, address, port or annotations.<key>), found ${describe(t)}`,
      );
    }
    const field = fieldOf(t.text);
    if (field.kind === 'unknown') this.unknownField = true;
    const opToken = this.peek();
    if (opToken.kind !== 'op') return { type: 'present', field };
    this.next();
    const op = opToken.text;
    const v = this.next();
    if (v.kind !== 'word' && v.kind !== 'string')
      throw new FilterSyntaxError(v.pos, `expected a value after '${op}', found ${describe(v)}`);
    if (field.kind === 'annotations') {
      if (op !== ':')
        throw new FilterSyntaxError(
          opToken.pos,
          `annotations takes only ':' (annotations:KEY tests for a key); compare a value with annotations.KEY${op}VALUE`,
        );
      return { type: 'present', field: { kind: 'annotation', key: v.text } };
    }
    let number = Number.NaN;
    if (field.kind === 'port' && !(op === ':' && v.text === '*')) {
      if (!/^[0-9]{1,10}$/.test(v.text))
        throw new FilterSyntaxError(v.pos, `port is compared with an integer, found ${describe(v)}`);
      number = Number(v.text);
    }
    return { type: 'compare', field, op, value: v.text, number };
  }
}

function fieldOf(text: string): Field {
  if (text === 'name' || text === 'address' || text === 'port' || text === 'annotations') return { kind: text };
  if (text.startsWith('annotations.') && text.length > 'annotations.'.length)
    return { kind: 'annotation', key: text.slice('annotations.'.length) };
  return { kind: 'unknown' };
}

// ---- evaluation ----

function compare<T extends string | number>(op: Operator, a: T, b: T): boolean {
  switch (op) {
    case '=':
    case ':':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

function evaluate(node: Node, e: FilterableEndpoint): boolean {
  switch (node.type) {
    case 'and':
      return node.operands.every((n) => evaluate(n, e));
    case 'or':
      return node.operands.some((n) => evaluate(n, e));
    case 'not':
      return !evaluate(node.operand, e);
    case 'present':
      return present(node.field, e);
    case 'compare': {
      const { field, op, value } = node;
      if (op === ':' && value === '*') return present(field, e);
      switch (field.kind) {
        case 'port':
          return compare(op, e.port, node.number);
        case 'name':
        case 'address':
          return compare(op, e[field.kind], value);
        case 'annotation': {
          const actual = Object.prototype.hasOwnProperty.call(e.annotations, field.key)
            ? e.annotations[field.key]
            : undefined;
          return actual !== undefined && compare(op, actual, value);
        }
        default:
          return false;
      }
    }
  }
}

function present(field: Field, e: FilterableEndpoint): boolean {
  switch (field.kind) {
    case 'name':
    case 'address':
      return e[field.kind] !== '';
    case 'port':
      return e.port !== 0;
    case 'annotations':
      return Object.keys(e.annotations).length > 0;
    case 'annotation':
      return Object.prototype.hasOwnProperty.call(e.annotations, field.key);
    case 'unknown':
      return false;
  }
}

const MATCH_ALL: (text: string) => CompiledFilter = (text) => ({ text, matches: () => true });

/** Parses `text` once; the result is evaluated per endpoint. An empty filter matches every endpoint. Throws FilterSyntaxError. */
export function compileFilter(text: string): CompiledFilter {
  if (text.length > MAX_FILTER_LENGTH)
    throw new FilterSyntaxError(
      MAX_FILTER_LENGTH + 1,
      `the filter is ${text.length} characters long; the limit is ${MAX_FILTER_LENGTH}`,
    );
  if (text.trim() === '') return MATCH_ALL(text);
  const parser = new Parser(tokenize(text));
  const root = parser.parseFilter();
  if (parser.unknownField) return { text, matches: () => false };
  return { text, matches: (e) => evaluate(root, e) };
}
