/**
 * The landing page at `/`: version, the fleet view, a line for every route the route table gives
 * one, and the targets with their last poll. Every value from outside is escaped.
 */
import type { RouteDeps, RouteEntry, RouteHandler } from './route-types.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** `routes`: the routes served beside it, in table order; those with a `landing` line are listed. */
export function landingHandler(deps: RouteDeps, routes: readonly RouteEntry[]): RouteHandler {
  return (_request, reply) =>
    reply
      .code(200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(landingPage(deps, routes));
}

export function routeLines(routes: readonly RouteEntry[]): string {
  return routes
    .flatMap(({ path, landing }) => {
      if (!landing) return [];
      const shown = escapeHtml(path);
      if (landing.query !== undefined) return [`<li>${escapeHtml(landing.title)}: <code>${shown}?${escapeHtml(landing.query)}</code></li>`];
      return [`<li><a href="${shown}">${escapeHtml(landing.title)}</a> (${shown})</li>`];
    })
    .join('\n');
}

function landingPage(deps: RouteDeps, routes: readonly RouteEntry[]): string {
  const rows = deps
    .statuses()
    .map((s) => {
      const poll = s.lastPoll;
      const result = poll ? (poll.ok ? 'ok' : 'failed') : 'not polled yet';
      const at = poll ? new Date(poll.at).toISOString() : '';
      const duration = poll ? `${(poll.durationMs / 1000).toFixed(3)} s` : '';
      const details = poll ? poll.failures.map((f) => `<div>${escapeHtml(f)}</div>`).join('') : '';
      return `<tr><td>${escapeHtml(s.kind)}</td><td>${escapeHtml(s.name)}</td><td>${(s.intervalMs / 1000).toString()} s</td><td class="${poll ? (poll.ok ? 'ok' : 'failed') : ''}">${result}</td><td>${at}</td><td>${duration}</td><td>${details}</td></tr>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Flussonic exporter</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}.ok{color:#070}.failed{color:#b00}</style>
</head>
<body>
<h1>Flussonic exporter</h1>
${deps.demo ? '<p class="failed"><strong>Demo mode: simulated data from an embedded simulator, not from a Flussonic server.</strong></p>\n' : ''}<p>Version ${escapeHtml(deps.version)}</p>
${deps.fleet ? `<p>${escapeHtml(deps.fleet.describe())}</p>` : ''}
<ul>
${routeLines(routes)}
</ul>
<h2>Targets</h2>
<table>
<tr><th>Kind</th><th>Name</th><th>Interval</th><th>Last poll</th><th>At</th><th>Duration</th><th>Failures</th></tr>
${rows}
</table>
</body>
</html>
`;
}
