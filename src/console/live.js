// Live updates: on each change the events stream reports, the page's <main> is drawn again from the
// server (the same HTML a reload would give), at most every 300 ms. Without JavaScript, pages reload.
(() => {
  const main = document.getElementById('main');
  if (main?.dataset.live !== 'on' || !window.EventSource) return;
  let timer = null;
  const refresh = async () => {
    timer = null;
    // Not while someone types into a form of the page: their input would be drawn over.
    if (main.contains(document.activeElement) && document.activeElement.matches('input, select')) return;
    const response = await fetch(location.href, { credentials: 'same-origin' });
    if (!response.ok || response.redirected) return;
    const page = new DOMParser().parseFromString(await response.text(), 'text/html');
    const fresh = page.getElementById('main');
    if (fresh) main.innerHTML = fresh.innerHTML;
    main.dataset.refreshed = String(Date.now());
  };
  const soon = () => {
    if (timer === null) timer = setTimeout(() => refresh().catch(() => {}), 300);
  };
  const events = new EventSource('/ui/events');
  for (const kind of ['decision', 'replica', 'load']) events.addEventListener(kind, soon);
  events.addEventListener('ready', () => {
    main.dataset.stream = 'open';
  });
})();
