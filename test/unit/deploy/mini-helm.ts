/**
 * A deliberately small evaluator for the Go-template subset the chart uses (no Helm binary exists
 * here): `{{ .Values.x }}`, `{{ . }}`, if/range/end, define/include with `.` or `(dict "k" "v")`,
 * toYaml, nindent, and `{{-`/`-}}` whitespace trimming. Anything else throws, so a template that
 * grows beyond the subset fails the test instead of rendering wrongly.
 */
import yaml from 'js-yaml';

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'expr'; expr: string }
  | { kind: 'if' | 'range'; expr: string; body: Node[] }
  | { kind: 'define'; name: string; body: Node[] };

function tokenize(src: string): ({ text: string } | { action: string })[] {
  const out: ({ text: string } | { action: string })[] = [];
  const re = /\{\{(-?)\s*([\s\S]*?)\s*(-?)\}\}/g;
  let last = 0;
  let trimNext = false;
  for (let m = re.exec(src); m !== null; m = re.exec(src)) {
    let text = src.slice(last, m.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (m[1] === '-') text = text.replace(/\s+$/, '');
    out.push({ text }, { action: m[2] ?? '' });
    trimNext = m[3] === '-';
    last = re.lastIndex;
  }
  out.push({ text: trimNext ? src.slice(last).replace(/^\s+/, '') : src.slice(last) });
  return out;
}

function parse(src: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  const top = (): Node[] => stack[stack.length - 1] as Node[];
  for (const t of tokenize(src)) {
    if ('text' in t) {
      if (t.text !== '') top().push({ kind: 'text', text: t.text });
      continue;
    }
    const a = t.action;
    if (a.startsWith('/*')) continue;
    const block = /^(if|range)\s+(.+)$/.exec(a);
    const define = /^define\s+"([^"]+)"$/.exec(a);
    if (block) {
      const node: Node = { kind: block[1] as 'if' | 'range', expr: block[2] ?? '', body: [] };
      top().push(node);
      stack.push(node.body);
    } else if (define) {
      const node: Node = { kind: 'define', name: define[1] ?? '', body: [] };
      top().push(node);
      stack.push(node.body);
    } else if (a === 'end') {
      if (stack.length === 1) throw new Error('unbalanced {{ end }}');
      stack.pop();
    } else top().push({ kind: 'expr', expr: a });
  }
  if (stack.length !== 1) throw new Error('unclosed block');
  return root;
}

function lookup(dot: unknown, path: string): unknown {
  if (path === '.') return dot;
  if (!path.startsWith('.')) throw new Error(`unsupported operand ${path}`);
  return path.slice(1).split('.').reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), dot);
}

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v !== null && typeof v === 'object') return Object.keys(v).length > 0;
  return v !== undefined && v !== null && v !== false && v !== 0 && v !== '';
}

function print(v: unknown): string {
  if (v === undefined || v === null) return '<no value>';
  if (typeof v === 'object') throw new Error(`printing a ${Array.isArray(v) ? 'list' : 'map'} needs toYaml`);
  return String(v);
}

export class MiniHelm {
  private readonly defines = new Map<string, Node[]>();

  constructor(helpers: string) {
    for (const n of parse(helpers)) if (n.kind === 'define') this.defines.set(n.name, n.body);
  }

  render(template: string, values: unknown): string {
    return this.run(parse(template), { Values: values });
  }

  private run(nodes: Node[], dot: unknown): string {
    let out = '';
    for (const n of nodes) {
      if (n.kind === 'text') out += n.text;
      else if (n.kind === 'expr') out += this.pipeline(n.expr, dot);
      else if (n.kind === 'if') out += truthy(lookup(dot, n.expr)) ? this.run(n.body, dot) : '';
      else if (n.kind === 'range') {
        const items = lookup(dot, n.expr);
        if (!Array.isArray(items)) throw new Error(`range over a non-list ${n.expr}`);
        for (const item of items) out += this.run(n.body, item);
      }
    }
    return out;
  }

  private argument(arg: string, dot: unknown): unknown {
    const dict = /^\(dict((?:\s+"[^"]*")*)\)$/.exec(arg);
    if (!dict) return lookup(dot, arg);
    const words = [...(dict[1] ?? '').matchAll(/"([^"]*)"/g)].map((m) => m[1] ?? '');
    const obj: Record<string, string> = {};
    for (let i = 0; i + 1 < words.length; i += 2) obj[words[i] as string] = words[i + 1] as string;
    return obj;
  }

  private pipeline(expr: string, dot: unknown): string {
    const [first = '', ...filters] = expr.split('|').map((s) => s.trim());
    let value: string;
    const include = /^include\s+"([^"]+)"\s+(.+)$/.exec(first);
    const toYaml = /^toYaml\s+(\S+)$/.exec(first);
    if (include) {
      const body = this.defines.get(include[1] ?? '');
      if (!body) throw new Error(`no template ${include[1]}`);
      value = this.run(body, this.argument(include[2] ?? '', dot));
    } else if (toYaml) value = yaml.dump(lookup(dot, toYaml[1] ?? '')).trimEnd();
    else value = print(lookup(dot, first));
    for (const f of filters) {
      const nindent = /^nindent\s+(\d+)$/.exec(f);
      if (!nindent) throw new Error(`unsupported function ${f}`);
      const pad = ' '.repeat(Number(nindent[1]));
      value = `\n${value.split('\n').map((l) => pad + l).join('\n')}`;
    }
    return value;
  }
}
