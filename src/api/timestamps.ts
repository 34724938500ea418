import { z } from '@hono/zod-openapi';

// Years of four digits, as Postgres' timestamptz and JavaScript's ISO strings both keep them.
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** An RFC 3339 timestamp of an input, which the store can keep: in the years 0001 to 9999 in UTC. */
export const TimestampSchema = z.iso
  .datetime({ offset: true, error: 'must be an RFC 3339 timestamp' })
  .refine(
    (text) => {
      const at = Date.parse(text);
      return at >= EARLIEST && at <= LATEST;
    },
    { error: 'must be a time in the years 0001 to 9999 (UTC)' },
  );
