import type { Sql } from '../store/db.ts';
import { reconcilerId } from '../workflows/messages.ts';
import type { Api } from './api-client.ts';
import type { Viewer } from './layout.tsx';

/** What each page is drawn from: the API as the signed-in token calls it, and who that is. */
export interface PageContext {
  api: Api;
  viewer: Viewer;
  /** The page's query parameters (a form's fields, for the forms that preview). */
  query: Record<string, string>;
  /** Only for what no API answer holds: a model's last hour of decisions (store/changes.ts). */
  sql: Sql;
  now: number;
  /** Sets the answer's status: a form's bad input is a 4xx, with the page around its sentence. */
  status: (code: number) => void;
  /** The Temporal UI's list of the namespace's workflows. */
  temporalWorkflows: string;
}

/** The Temporal UI's list filtered to the model's reconciler: its current run and the runs it continued from. */
export const reconcilerLink = (ctx: Pick<PageContext, 'temporalWorkflows'>, model: string) =>
  `${ctx.temporalWorkflows}?query=${encodeURIComponent(`WorkflowId="${reconcilerId(model)}"`)}`;
