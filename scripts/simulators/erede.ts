/**
 * e.Rede REST v1 simulator (`npm run simulator -- erede [--port n] [--pv X --token Y] [--verbose]`):
 * the API under `/erede/v1/transactions…`, HTTP Basic auth (PV:token), books per PV.
 * See docs/simulators/erede.md.
 */
import { SimAnswer, SimRequest, Simulator } from './faults';
import { ledgerView } from './erede/answers';
import { ret } from './erede/codes';
import { Books } from './erede/ledger';
import { Routes } from './erede/routes';

const BASE = '/erede/v1/transactions';

/** The PV of a request whose credentials pass, or the 401 to answer. */
function authenticate(req: SimRequest, pv?: string, token?: string): string | SimAnswer {
  const header = String(req.headers.authorization ?? '');
  const m = /^Basic\s+(\S+)$/i.exec(header);
  const pair = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const colon = pair.indexOf(':');
  const user = colon > 0 ? pair.slice(0, colon) : '';
  const secret = colon > 0 ? pair.slice(colon + 1) : '';
  if (!user || (pv !== undefined && user !== pv)) return { status: 401, body: ret('57') };
  if (!secret || (token !== undefined && secret !== token)) return { status: 401, body: ret('65') };
  return user;
}

function dispatch(routes: Routes, pv: string, req: SimRequest): SimAnswer {
  const rest = req.path.slice(BASE.length);
  const [, tid, sub, extra] = rest.split('/');
  if (req.malformed) return { status: 400, body: ret('167') };
  const type = String(req.headers['content-type'] ?? 'application/json');
  if (req.rawBody && !type.includes('json')) return { status: 400, body: ret('169') };
  if (rest === '' || rest === '/') {
    if (req.method === 'POST') return routes.create(pv, req);
    if (req.method === 'GET') return routes.byReference(pv, req.query.get('reference'));
  } else if (tid && sub === undefined) {
    if (req.method === 'PUT') return routes.capture(pv, tid, req);
    if (req.method === 'GET') return routes.get(pv, tid);
  } else if (tid && sub === 'refunds' && extra === undefined) {
    if (req.method === 'POST') return routes.refund(pv, tid, req);
    if (req.method === 'GET') return routes.refunds(pv, tid);
  }
  return { status: 405, body: { returnCode: '405', returnMessage: 'Method not allowed' } };
}

export function eredeSimulator(args: Map<string, string>): Simulator {
  const books = new Books();
  const routes = new Routes(books);
  const pv = args.get('pv');
  const token = args.get('token');
  const verbose = args.has('verbose');
  return {
    name: 'erede',
    handle(req) {
      let out: SimAnswer;
      if (req.path !== BASE && !req.path.startsWith(`${BASE}/`))
        out = { status: 404, body: { returnCode: '404', returnMessage: 'Not found' } };
      else {
        const who = authenticate(req, pv, token);
        out = typeof who === 'string' ? dispatch(routes, who, req) : who;
      }
      if (verbose) process.stdout.write(`${req.method} ${req.path} -> ${out.status}${req.fault ? ` (${req.fault.mode})` : ''}\n`);
      return out;
    },
    ledger: () => ledgerView(books.all()),
    reset: () => books.reset(),
  };
}
