import type { Measurement } from '../domain/model.ts';
import type { Db } from './db.ts';

type MeasurementRow = Omit<Measurement, 'measured_at' | 'points' | 'tool'> & {
  measured_at: Date;
  points: Measurement['points'] | null;
  tool: string | null;
};

const toMeasurement = (row: MeasurementRow): Measurement => ({
  model: row.model,
  profile: row.profile,
  max_concurrency_at_slo: row.max_concurrency_at_slo,
  throughput_tok_per_sec: row.throughput_tok_per_sec,
  slo: row.slo,
  ...(row.points ? { points: row.points } : {}),
  ...(row.tool ? { tool: row.tool } : {}),
  measured_at: row.measured_at.toISOString(),
});

export async function listMeasurements(sql: Db, model?: string): Promise<Measurement[]> {
  const rows = await sql<MeasurementRow[]>`
    select model, profile, max_concurrency_at_slo, throughput_tok_per_sec, slo, points, tool, measured_at
    from measurements ${model ? sql`where model = ${model}` : sql``} order by model, profile`;
  return rows.map(toMeasurement);
}

/** Replaces the model/profile's measurement. */
export async function putMeasurement(sql: Db, m: Measurement): Promise<void> {
  await sql`
    insert into measurements (model, profile, max_concurrency_at_slo, throughput_tok_per_sec, slo, points, tool, measured_at)
    values (${m.model}, ${m.profile}, ${m.max_concurrency_at_slo}, ${m.throughput_tok_per_sec}, ${sql.json(m.slo)},
      ${m.points ? sql.json(m.points) : null}, ${m.tool ?? null}, ${m.measured_at})
    on conflict (model, profile) do update set max_concurrency_at_slo = excluded.max_concurrency_at_slo,
      throughput_tok_per_sec = excluded.throughput_tok_per_sec, slo = excluded.slo, points = excluded.points,
      tool = excluded.tool, measured_at = excluded.measured_at`;
}
