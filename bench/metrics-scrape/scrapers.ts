// The scrapers of bench/metrics-scrape, in a process of their own as Prometheus is, so that reading
// the answers does not load the API's process. Arguments: BASE_URL PATH TOKEN SCRAPERS ROUNDS (PATH is
// /metrics, or /healthz to see what any request costs on this machine now); prints
// {"scrapes": [ms...], "readyz": [ms...]} on stdout.
const [base, path, token, scrapers, rounds] = process.argv.slice(2);

const timed = async (url: string, headers: Record<string, string> = {}) => {
  const started = performance.now();
  const response = await fetch(url, { headers });
  await response.text();
  if (response.status !== 200) throw new Error(`${url} -> ${response.status}`);
  return performance.now() - started;
};

const auth = { authorization: `Bearer ${token}` };
const scrapes: number[] = [];
const readyz: number[] = [];
await timed(`${base}${path}`, auth); // warm: the first read of the process
for (let round = 0; round < Number(rounds); round++) {
  // `scrapers` scrapes at once, and one /readyz while they run.
  const together = Array.from({ length: Number(scrapers) }, () => timed(`${base}${path}`, auth));
  readyz.push(await timed(`${base}/readyz`));
  scrapes.push(...(await Promise.all(together)));
}
process.stdout.write(JSON.stringify({ scrapes, readyz }));
