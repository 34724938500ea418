import { createParser } from 'eventsource-parser';

/**
 * The `data:` payloads of a server-sent event stream, one per event (multi-line data joined with "\n"),
 * as OpenAI-compatible servers stream chat completions. eventsource-parser 3 (not 4: it needs Node 22.12,
 * and llmgw runs on 20) reads the stream as the WHATWG spec says.
 */
export async function* sseData(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const events: string[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event.data) });
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* events.splice(0);
  }
  // A stream that ends after a whole line but before the blank line still gives its last event (a line
  // cut short is dropped, as the spec says).
  parser.feed(`${decoder.decode()}\n`);
  yield* events.splice(0);
}
