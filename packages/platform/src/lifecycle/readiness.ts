/**
 * Readiness as a set of named checks. A service is ready when every check passes;
 * /readyz reports each one so an operator sees which dependency is missing.
 */
export type ReadinessCheck = () => boolean | Promise<boolean>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, boolean>;
}

export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private draining = false;

  add(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  /** Once shutdown starts the service reports not ready, so balancers stop sending. */
  markDraining(): void {
    this.draining = true;
  }

  async report(): Promise<ReadinessReport> {
    const checks: Record<string, boolean> = { accepting: !this.draining };
    for (const [name, check] of this.checks) {
      try {
        checks[name] = await check();
      } catch {
        checks[name] = false;
      }
    }
    return { ready: Object.values(checks).every(Boolean), checks };
  }
}
