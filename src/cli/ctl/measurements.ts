import type { components } from './api.gen.ts';
import { queryString } from './client.ts';
import type { Command } from './command.ts';
import { num, table } from './output.ts';

/** A stored measurement, as the API's OpenAPI document describes it (api.gen.ts, `npm run api-types`). */
type MeasurementRow = components['schemas']['StoredMeasurement'];

/** "TTFT p95 <= 500 ms, TPOT p95 <= 50 ms". */
export const sloText = (slo: MeasurementRow['slo']) =>
  [
    slo.ttft_p95_ms === undefined ? null : `TTFT p95 <= ${slo.ttft_p95_ms} ms`,
    slo.tpot_p95_ms === undefined ? null : `TPOT p95 <= ${slo.tpot_p95_ms} ms`,
  ]
    .filter(Boolean)
    .join(', ') || 'no SLO';

export const MEASUREMENT_COMMANDS: Command[] = [
  {
    path: 'measurements',
    summary: 'List stored bench measurements: how many requests in flight one replica serves within its SLO.',
    options: { model: { type: 'string', value: 'M', description: "only this model's" } },
    examples: ['llmgw ctl measurements', 'llmgw ctl measurements --model llama-70b -o json'],
    async run(ctx, { values }) {
      const measurements = await ctx
        .api()
        .get<MeasurementRow[]>(`/measurements${queryString({ model: values.model })}`);
      ctx.out.show(measurements, () =>
        table(
          ['MODEL', 'PROFILE', 'MAX_CONCURRENCY_AT_SLO', 'TOKENS_PER_SEC', 'SLO', 'TOOL', 'MEASURED_AT'],
          measurements.map((m) => [
            m.model,
            m.profile,
            m.max_concurrency_at_slo,
            num(m.throughput_tok_per_sec),
            sloText(m.slo),
            m.tool,
            m.measured_at,
          ]),
          'no measurements',
        ),
      );
    },
  },
];
