import { IMPORT_FORMATS, type ImportFormat, importResults } from '../../engine-bench/import.ts';
import { measurementOf } from '../../engine-bench/measurement.ts';
import { benchEndpoint } from '../../engine-bench/run-bench.ts';
import { levelLine, MEASUREMENT_OPTIONS, reportMeasurement, sloOf } from './bench-report.ts';
import type { Command } from './command.ts';
import { Failed, UsageError } from './errors.ts';
import { numberOption } from './options.ts';

const TOOL = 'llmgw-bench';

const bench: Command = {
  path: 'bench',
  summary:
    'Find the highest concurrency at which an OpenAI-compatible endpoint meets an SLO, and its throughput there.',
  details: [
    'Drives POST URL/chat/completions (stream: true, as vLLM, SGLang, llama.cpp and TGI serve it) with a',
    'fixed number of requests in flight: 1, 2, 4, ... until a level misses the SLO, then bisects between',
    'the last level that met it and the first that missed. Per level it measures TTFT (time to the first',
    'token), TPOT (mean time between the tokens after the first), end-to-end latency and output tokens/s;',
    'a level meets the SLO when its p95 TTFT and p95 TPOT do and no request failed or timed out. A request',
    'lost on a kept-alive connection the endpoint closed is sent once more on a new connection; requests that',
    'still cannot reach it are reported apart from failed answers.',
    'Progress goes to stderr, one line per level; the levels and the answer to stdout.',
  ].join('\n'),
  options: {
    ...MEASUREMENT_OPTIONS,
    url: {
      type: 'string',
      value: 'URL',
      description: 'the OpenAI-compatible base URL, e.g. http://HOST:8000/v1',
      required: true,
    },
    'served-model': {
      type: 'string',
      value: 'NAME',
      description: 'the model name the endpoint serves (default: --model)',
    },
    'prompt-tokens': { type: 'string', value: 'N', description: 'prompt length in tokens (default 512)' },
    'max-tokens': { type: 'string', value: 'N', description: 'tokens generated per request (default 256)' },
    'requests-per-level': {
      type: 'string',
      value: 'N',
      description: 'requests per level (default max(8, 2 x concurrency))',
    },
    'max-concurrency': { type: 'string', value: 'N', description: 'the highest level tried (default 256)' },
    'timeout-s': { type: 'string', value: 'S', description: 'a request taking longer fails (default 60)' },
    store: {
      type: 'boolean',
      description:
        'store the result as the measurement of M/P (PUT /api/v1/measurements); when no level meets the SLO, nothing is stored and it exits 1',
    },
  },
  examples: [
    'llmgw ctl bench --model llama-70b --profile h100 --url http://10.0.0.5:8000/v1 --slo-ttft-p95-ms 500 --slo-tpot-p95-ms 50',
    'llmgw ctl bench --model llama-70b --profile h100 --url http://10.0.0.5:8000/v1 --slo-ttft-p95-ms 500 --slo-tpot-p95-ms 50 --prompt-tokens 1024 --max-tokens 128 --store',
  ],
  async run(ctx, input) {
    const slo = sloOf(input);
    const model = input.values.model as string;
    const profile = input.values.profile as string;
    const count = { integer: true, min: 1 };
    const options = {
      target: {
        url: input.values.url as string,
        model: (input.values['served-model'] as string | undefined) ?? model,
        timeoutMs: numberOption(input, 'timeout-s', { positive: true }, 60) * 1000,
      },
      slo,
      promptTokens: numberOption(input, 'prompt-tokens', count, 512),
      maxTokens: numberOption(input, 'max-tokens', count, 256),
      requestsPerLevel: numberOption(input, 'requests-per-level', count),
      maxConcurrency: numberOption(input, 'max-concurrency', count, 256),
    };
    ctx.out.note(
      `bench: ${options.target.url} (model ${options.target.model}), up to ${options.maxConcurrency} in flight`,
    );
    let result: Awaited<ReturnType<typeof benchEndpoint>>;
    try {
      result = await benchEndpoint(options, (level) => ctx.out.note(`bench: ${levelLine(level, slo)}`));
    } catch (error) {
      throw new Failed(`bench: ${(error as Error).message}`);
    }
    const measurement = measurementOf({ model, profile, tool: TOOL }, slo, result.levels);
    await reportMeasurement(ctx, measurement, result.levels, {
      store: input.values.store === true,
      capped: result.capped,
    });
  },
};

const benchImport: Command = {
  path: 'bench import',
  args: 'FILE',
  positionals: { min: 1, max: 1 },
  summary: 'Store a measurement from the results of vllm bench serve or GuideLLM, judged against an SLO.',
  details: [
    '--from vllm: the JSON that `vllm bench serve --save-result` writes, one per --max-concurrency run; the',
    '  file may hold one result, an array of them, or JSON lines (--append-result). Its p95_ttft_ms and',
    '  p95_tpot_ms are used (run with --percentile-metrics ttft,tpot --metric-percentiles 95); without',
    '  them, the p99 (stricter). Failed requests make a run miss the SLO.',
    '--from guidellm: benchmarks.json of `guidellm benchmark`; each benchmark is a level at its concurrency',
    '  (streams), with the p95 of time_to_first_token_ms and of inter_token_latency_ms (the TPOT after the',
    '  first token) and the mean output_tokens_per_second. Errored requests make a level miss the SLO.',
    'The answer is the highest concurrency that meets the SLO with every lower one meeting it too.',
  ].join('\n'),
  options: {
    from: {
      type: 'string',
      value: IMPORT_FORMATS.join('|'),
      description: 'the tool that wrote FILE',
      required: true,
    },
    ...MEASUREMENT_OPTIONS,
  },
  examples: [
    'llmgw ctl bench import --from vllm results.jsonl --model llama-70b --profile h100 --slo-ttft-p95-ms 500 --slo-tpot-p95-ms 50',
    'llmgw ctl bench import --from guidellm benchmarks.json --model llama-70b --profile h100 --slo-ttft-p95-ms 500 --slo-tpot-p95-ms 50',
  ],
  async run(ctx, input) {
    const from = input.values.from as string;
    if (!IMPORT_FORMATS.includes(from as ImportFormat)) {
      throw new UsageError(`--from ${from}: the tool is one of ${IMPORT_FORMATS.join(', ')}`);
    }
    const slo = sloOf(input);
    const [path] = input.positionals;
    let imported: ReturnType<typeof importResults>;
    try {
      imported = importResults(from as ImportFormat, ctx.readFile(path), path);
    } catch (error) {
      throw error instanceof Failed ? error : new Failed((error as Error).message);
    }
    for (const warning of imported.warnings) ctx.out.note(`bench import: ${warning}`);
    const target = {
      model: input.values.model as string,
      profile: input.values.profile as string,
      tool: imported.tool,
    };
    await reportMeasurement(ctx, measurementOf(target, slo, imported.levels), imported.levels, {
      store: true,
    });
  },
};

export const BENCH_COMMANDS: Command[] = [bench, benchImport];
