import type { Position } from "./keyset";

/** Builds a parameterised WHERE clause; every list starts from the organisation it is scoped to. */
export class Where {
  readonly params: unknown[] = [];
  private readonly clauses: string[] = [];

  constructor(orgId: string) {
    this.add((p) => `org_id = ${p}`, orgId);
  }

  /** A placeholder for `value`, to place in SQL outside the WHERE clause. */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  add(clause: (placeholder: string) => string, value: unknown): this {
    this.clauses.push(clause(this.param(value)));
    return this;
  }

  /** Adds the clause only when a filter value was given. */
  addIf<T>(value: T | undefined, clause: (placeholder: string) => string): this {
    return value === undefined ? this : this.add(clause, value);
  }

  since(from: Date | undefined): this {
    return this.addIf(from?.toISOString(), (p) => `created_at >= ${p}::timestamptz`);
  }

  /** Newest first: the next page holds rows strictly before the cursor's (created_at, id). */
  after(position: Position | undefined): this {
    if (!position) return this;
    const at = this.param(position.createdAt.toISOString());
    const id = this.param(position.id);
    this.clauses.push(`(created_at, id) < (${at}::timestamptz, ${id})`);
    return this;
  }

  /** The clause itself; call it before adding parameters that go after it (LIMIT). */
  clause(): string {
    return `WHERE ${this.clauses.join(" AND ")}`;
  }
}
