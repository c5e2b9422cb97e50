/**
 * Manifests nested deeper than MAX_MANIFEST_DEPTH are refused before and after parsing, without
 * recursion, so neither js-yaml (recursive per level) nor a validator walking the object ever meets
 * a stack overflow. Kubernetes objects are a few levels deep; 100 is protobuf's recursion limit, the
 * one the JSON bodies of the gateway and the sign-in API get too.
 */
import { MAX_JSON_DEPTH } from '../http/json-guard.js';

export const MAX_MANIFEST_DEPTH = MAX_JSON_DEPTH;

const BLOCK_SCALAR = /:\s*[|>][-+0-9]*\s*$|^\s*-\s+[|>][-+0-9]*\s*$/;

/**
 * An upper bound of the nesting a YAML (or JSON) text asks for, line by line: the block levels
 * (distinct indentations open, plus `- ` entries and a `key:` on the line) and the open flow
 * brackets. Block scalars' content (`|`, `>`) and quoted text are skipped. Returns the 1-based line
 * where the bound first exceeds `max`, or undefined.
 */
export function yamlDepthProblem(text: string, max = MAX_MANIFEST_DEPTH): { line: number; depth: number } | undefined {
  const indents: number[] = [];
  let flow = 0;
  let scalarIndent = -1;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n] as string;
    const indent = line.length - line.trimStart().length;
    const content = line.trim();
    if (scalarIndent >= 0) {
      if (content === '' || indent > scalarIndent) continue;
      scalarIndent = -1;
    }
    if (content === '' || content.startsWith('#')) continue;
    if (content === '---' || content.startsWith('--- ') || content === '...') {
      indents.length = 0;
      flow = 0;
      continue;
    }
    if (flow === 0) {
      while (indents.length > 0 && (indents[indents.length - 1] as number) > indent) indents.pop();
      if (indents.length === 0 || (indents[indents.length - 1] as number) < indent) indents.push(indent);
    }
    let dashes = 0;
    while (content.startsWith('- ', dashes * 2) || content.slice(dashes * 2) === '-') dashes++;
    let quote = '';
    for (let i = 0; i < content.length; i++) {
      const c = content[i];
      if (quote !== '') {
        if (c === '\\' && quote === '"') i++;
        else if (c === quote) quote = '';
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '#' && (i === 0 || content[i - 1] === ' ')) break;
      else if (c === '[' || c === '{') {
        if (indents.length + dashes + ++flow > max) return { line: n + 1, depth: indents.length + dashes + flow };
      } else if (c === ']' || c === '}') flow = Math.max(0, flow - 1);
    }
    const depth = indents.length + dashes + (content.includes(': ') || content.endsWith(':') ? 1 : 0) + flow;
    if (depth > max) return { line: n + 1, depth };
    if (BLOCK_SCALAR.test(content)) scalarIndent = indent;
  }
  return undefined;
}

/**
 * The depth of a parsed value, iteratively, each shared node (a YAML alias) measured once: a chain
 * of aliases builds an object far deeper than its text looks, and a "billion laughs" document
 * shares nodes exponentially, so the walk is over distinct nodes, not paths.
 */
export function valueDepth(root: unknown): number {
  const depthOf = new Map<object, number>();
  const open = new Set<object>();
  const stack: { node: object; expanded: boolean }[] = [];
  if (typeof root !== 'object' || root === null) return 0;
  stack.push({ node: root, expanded: false });
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { node: object; expanded: boolean };
    if (depthOf.has(top.node)) {
      stack.pop();
      continue;
    }
    const children = Object.values(top.node).filter((v): v is object => typeof v === 'object' && v !== null);
    if (!top.expanded) {
      top.expanded = true;
      open.add(top.node);
      for (const c of children) {
        // A cycle (an object that contains itself) is deeper than any limit.
        if (open.has(c)) return Infinity;
        if (!depthOf.has(c)) stack.push({ node: c, expanded: false });
      }
      continue;
    }
    stack.pop();
    open.delete(top.node);
    let deepest = 0;
    for (const c of children) deepest = Math.max(deepest, depthOf.get(c) ?? 0);
    depthOf.set(top.node, deepest + 1);
  }
  return depthOf.get(root) ?? 0;
}
