/** What a bearer token may do (src/contracts/permissions.ts says exactly what each may). */
export const ROLES = ['admin', 'operator', 'viewer', 'reporter', 'metrics', 'client', 'agent'] as const;
export type Role = (typeof ROLES)[number];
