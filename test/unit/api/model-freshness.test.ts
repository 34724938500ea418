// The model list shows the newest decision beside live figures; `freshness` says which is newer
// whenever the load shown is not the one the decision saw (issue 21, "Contradictions in the model list").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freshness } from '../../../src/api/routes/models/read-model.ts';
import type { StoredDecision } from '../../../src/store/decisions.ts';

const AT = '2025-05-01T10:00:00.000Z';
const LATER = Date.parse('2025-05-01T10:00:07.000Z');
const EARLIER = Date.parse('2025-05-01T09:59:00.000Z');
const pass = (inFlight: number | null): StoredDecision => ({
  at: AT,
  action: 'none',
  reason: 'steady',
  inputs: { in_flight: inFlight, capacity_at_slo: 16 },
});

describe('freshness of the newest decision beside the live load', () => {
  const cases: {
    name: string;
    decision: StoredDecision | null;
    load: { inFlight: number | null; reportedAt: number | null };
    says: string | null;
  }[] = [
    {
      name: 'no decision: nothing to compare',
      decision: null,
      load: { inFlight: 11, reportedAt: LATER },
      says: null,
    },
    {
      name: 'the decision saw the load shown',
      decision: pass(11),
      load: { inFlight: 11, reportedAt: EARLIER },
      says: null,
    },
    {
      name: 'neither knows a load',
      decision: pass(null),
      load: { inFlight: null, reportedAt: null },
      says: null,
    },
    {
      name: 'a note of a reclaim is no pass: it saw no load',
      decision: { at: AT, action: 'reclaimed', reason: 'reclaimed for team Acme / ml', inputs: {} },
      load: { inFlight: 11, reportedAt: LATER },
      says: null,
    },
    {
      name: 'load reported after a decision that saw none (the issue: "load never reported" beside 11)',
      decision: pass(null),
      load: { inFlight: 11, reportedAt: LATER },
      says: `decided at ${AT}, on figures from before the load reported at 2025-05-01T10:00:07.000Z (it saw no known load, now 11 in flight)`,
    },
    {
      name: 'load changed since the decision',
      decision: pass(4),
      load: { inFlight: 11, reportedAt: LATER },
      says: `decided at ${AT}, on figures from before the load reported at 2025-05-01T10:00:07.000Z (it saw 4 in flight, now 11 in flight)`,
    },
    {
      name: 'the load went stale since the decision',
      decision: pass(11),
      load: { inFlight: null, reportedAt: EARLIER },
      says: `decided at ${AT}, when 11 in flight was known; the load is unknown now (last reported at 2025-05-01T09:59:00.000Z)`,
    },
    {
      name: 'every report is gone since the decision',
      decision: pass(3),
      load: { inFlight: null, reportedAt: null },
      says: `decided at ${AT}, when 3 in flight was known; the load is unknown now (no report is left)`,
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(freshness(c.decision, c.load), c.says));
  }
});
