/**
 * The `data:` payloads of a server-sent event stream, one per event (multi-line data joined with "\n"),
 * as OpenAI-compatible servers stream chat completions.
 */
export async function* sseData(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = '';
  let data: string[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end = buffered.indexOf('\n');
    while (end >= 0) {
      const line = buffered.slice(0, end).replace(/\r$/, '');
      buffered = buffered.slice(end + 1);
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
      end = buffered.indexOf('\n');
    }
  }
  if (data.length > 0) yield data.join('\n');
}
