/**
 * Roles and what each may do. Roles are ordered: an operator may do all a viewer
 * may, an admin all an operator may.
 */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];
/** `viewer, operator or admin`, for messages. */
export const ROLES_TEXT = `${ROLES.slice(0, -1).join(', ')} or ${ROLES[ROLES.length - 1]}`;

export const PERMISSIONS = {
  /** List and read policies, bans, the allowlist, alerts, backtests. */
  read: 'viewer',
  /** Place and lift bans. */
  'bans:write': 'operator',
  /** Add and remove allowlist entries. */
  'allowlist:write': 'operator',
  /** Replay retained traffic through a policy (costly, so not for viewers). */
  'backtests:run': 'operator',
  /** Add, sync and remove blocklist feeds. */
  'feeds:write': 'operator',
  /** A feed whose entries may be wider than CONTROL_MIN_PREFIX_V4/V6 (0.0.0.0/1…). */
  'feeds:force': 'admin',
  /** Create, change and delete policies. */
  'policies:write': 'admin',
} as const satisfies Record<string, Role>;
export type Permission = keyof typeof PERMISSIONS;

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function requiredRole(permission: Permission): Role {
  return PERMISSIONS[permission];
}

export function allows(role: Role, permission: Permission): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(PERMISSIONS[permission]);
}
