import { readFileSync } from 'node:fs';

/**
 * The console's static files, all served by the console app under /console/assets (nothing from a CDN):
 * uPlot from node_modules, and the console's own script and stylesheet. Read once at boot.
 */
export interface ConsoleAsset {
  type: string;
  body: string;
}

/** Draws the per-minute chart of the overview from the JSON in its `data-series` attribute (no inline script). */
const CONSOLE_JS = `'use strict';
(function () {
  var el = document.getElementById('per-minute');
  if (!el || typeof uPlot === 'undefined') return;
  var s = JSON.parse(el.getAttribute('data-series') || '{"t":[],"ok":[],"failed":[]}');
  var width = Math.max(320, Math.min(1100, el.clientWidth || 900));
  new uPlot({
    width: width,
    height: 240,
    scales: { x: { time: true } },
    series: [
      {},
      { label: 'succeeded', stroke: '#2e7d32', width: 1.5 },
      { label: 'failed', stroke: '#c62828', width: 1.5 },
    ],
    axes: [{}, { label: 'attempts / min' }],
  }, [s.t, s.ok, s.failed], el);
})();
`;

const CONSOLE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f6f7f9; }
header { background: #1f2937; color: #fff; padding: 8px 16px; display: flex; gap: 16px; align-items: center; }
header a { color: #e5e7eb; text-decoration: none; } header a:hover { text-decoration: underline; }
header .who { margin-left: auto; color: #cbd5e1; } header form { margin: 0; }
main { padding: 16px; max-width: 1200px; }
h1 { font-size: 20px; margin: 8px 0 16px; } h2 { font-size: 16px; margin: 20px 0 8px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border-bottom: 1px solid #e5e7eb; padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #f1f5f9; font-weight: 600; }
.state { padding: 1px 6px; border-radius: 3px; font-size: 12px; font-weight: 600; }
.state-succeeded { background: #dcfce7; color: #166534; } .state-failed { background: #fee2e2; color: #991b1b; }
.state-pending, .state-sending, .state-running { background: #fef9c3; color: #854d0e; }
.state-active { background: #dbeafe; color: #1e40af; } .state-completed { background: #dcfce7; color: #166534; }
.state-suspended { background: #fee2e2; color: #991b1b; } .state-expiring { background: #ffedd5; color: #9a3412; } td.nowrap { white-space: nowrap; }
.state-finished { background: #dcfce7; color: #166534; } .state-cancelled { background: #e5e7eb; color: #374151; } .state-blocked, .state-held { background: #e5e7eb; color: #374151; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin-bottom: 12px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: #475569; }
input, select, button { font: inherit; padding: 4px 6px; }
button { cursor: pointer; } button.primary { background: #1d4ed8; color: #fff; border: 0; border-radius: 4px; padding: 6px 12px; }
pre { background: #fff; border: 1px solid #e5e7eb; padding: 8px; white-space: pre-wrap; word-break: break-all; max-height: 320px; overflow: auto; }
.note { color: #475569; } .error { color: #991b1b; font-weight: 600; } .ok { color: #166534; font-weight: 600; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; } .card { background: #fff; border: 1px solid #e5e7eb; padding: 8px 12px; min-width: 110px; }
.card b { display: block; font-size: 20px; }
#per-minute { background: #fff; border: 1px solid #e5e7eb; min-height: 250px; }
form.inline { display: inline; margin: 0 0 0 6px; } form.inline button { font-size: 12px; padding: 2px 8px; }
.signin { max-width: 420px; margin: 60px auto; background: #fff; border: 1px solid #e5e7eb; padding: 20px; }
.signin input { width: 100%; box-sizing: border-box; margin: 8px 0 12px; }
`;

export function loadConsoleAssets(): Map<string, ConsoleAsset> {
  const uplot = (file: string) => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');
  return new Map<string, ConsoleAsset>([
    ['console.js', { type: 'application/javascript; charset=utf-8', body: CONSOLE_JS }],
    ['console.css', { type: 'text/css; charset=utf-8', body: CONSOLE_CSS }],
    ['uplot.js', { type: 'application/javascript; charset=utf-8', body: uplot('uPlot.iife.min.js') }],
    ['uplot.css', { type: 'text/css; charset=utf-8', body: uplot('uPlot.min.css') }],
  ]);
}
