/** Thrown when the environment does not satisfy a service's config schema; names every bad key. */
export class ConfigError extends Error {
  /** Its message says what to fix: a service that cannot start prints it without a stack. */
  readonly operatorFacing = true;

  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join("\n  ")}`);
    this.name = "ConfigError";
  }
}
