/**
 * Builds field paths the way Kubernetes prints them (field.Path): dots between fields,
 * `[i]` for list indexes and `[key]` for map keys, so `spec.annotations[example.com/team]`.
 */
export class FieldPath {
  private constructor(private readonly text: string) {}

  static root(name = ''): FieldPath {
    return new FieldPath(name);
  }

  child(name: string): FieldPath {
    return new FieldPath(this.text === '' ? name : `${this.text}.${name}`);
  }

  index(i: number): FieldPath {
    return new FieldPath(`${this.text}[${i}]`);
  }

  key(k: string): FieldPath {
    return new FieldPath(`${this.text}[${k}]`);
  }

  toString(): string {
    return this.text;
  }
}

/** Renders a zod-style path (`['spec', 'trafficSplit', '7']`) in Kubernetes form, given which segments are map keys. */
export function formatPath(
  segments: readonly PropertyKey[],
  isMapKey: (prefix: readonly PropertyKey[]) => boolean = () => false,
): string {
  let path = FieldPath.root();
  segments.forEach((segment, i) => {
    if (typeof segment === 'number') path = path.index(segment);
    else if (isMapKey(segments.slice(0, i))) path = path.key(String(segment));
    else path = path.child(String(segment));
  });
  return path.toString();
}
