import type { ScopeKey } from '../domain/scope.ts';
import type { Db } from './db.ts';

/** How many models are owned within `scope` (by it or beneath it), and how many scopes lie beneath it. */
export async function countWithin(db: Db, scope: ScopeKey): Promise<{ models: number; scopes: number }> {
  const [counts] = await db<{ models: number; scopes: number }[]>`
    with beneath as (
      select 'team:' || t.id as key from teams t where 'org:' || t.org_id = ${scope}
      union all
      select 'project:' || p.id from projects p join teams t on t.id = p.team_id
        where 'org:' || t.org_id = ${scope} or 'team:' || t.id = ${scope}
    )
    select (select count(*)::int from beneath) as scopes,
      (select count(*)::int from models where owner = ${scope} or owner in (select key from beneath)) as models`;
  return counts;
}
