// A TypeScript SDK v2 server (@modelcontextprotocol/server 2.4.0) that mcptrio's client is tested
// against, in both eras. Run by tests/interop/test_ts_server.py:
//
//   node server.mjs stdio   serveStdio(): the first message picks the era of the connection
//   node server.mjs http    Streamable HTTP on 127.0.0.1, port 0; prints its base URL on stdout
//
// Over HTTP two endpoints serve the same factory:
//
//   /mcp        createMcpHandler(factory) as shipped: the stateless era, and 2025-era traffic
//               through the SDK's stateless legacy fallback (a fresh instance per request, no
//               session: no server-to-client requests, no standalone GET stream)
//   /sessions   the pattern the SDK documents for keeping a sessionful 2025-era deployment next
//               to a strict modern handler: isLegacyRequest() routes 2025-era requests to a
//               WebStandardStreamableHTTPServerTransport with session ids, the rest to
//               createMcpHandler(factory, { legacy: 'reject' })
//
// One factory defines everything once; the SDK serves it to both eras. Handlers that need input
// from the client return inputRequired(...): a 2026-07-28 client fulfils it and retries (MRTR),
// and on a 2025-era connection the SDK's legacy shim sends real elicitation/create,
// sampling/createMessage and roots/list requests instead. State the tests observe (cancellations, touches)
// lives in this module, since the HTTP entries build an instance per request.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  McpServer,
  ResourceTemplate,
  WebStandardStreamableHTTPServerTransport,
  acceptedContent,
  completable,
  createMcpHandler,
  inputRequired,
  inputResponse,
  isLegacyRequest,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const COUNTER_URI = 'ts://counter';

/** What the tests ask about afterwards: request ids the SDK told a handler were cancelled. */
const cancelled = [];
let touches = 0;
/** Publishes a change to every listener of whichever entry is serving (set below). */
let publishChange = () => {};
/** Whether the instance serves one HTTP request only (set below for HTTP). */
let perRequest = () => false;
/** The 2025-era instances alive on a connection or session, with the URIs subscribed there. */
const legacyInstances = new Map();

const text = (value) => ({ content: [{ type: 'text', text: value }] });

/** The factory: `entry` is what the serving entry says of the instance (its era...). */
function buildServer(entry) {
  const server = new McpServer(
    { name: 'ts-v2-interop-server', version: '2.4.0' },
    {
      capabilities: {
        resources: { subscribe: true, listChanged: true },
        tools: { listChanged: true },
        logging: {},
      },
      instructions: 'A TypeScript SDK v2 server for interop tests.',
      // 2026-07-28 results may be cached for ttlMs: the listing of tools for a minute.
      cacheHints: { 'tools/list': { ttlMs: 60_000 } },
    }
  );

  // Its description says how often touch was called: a listing shows whether it is fresh.
  const touchedTool = server.registerTool(
    'touched',
    { description: `touched ${touches} times` },
    async () => text(String(touches))
  );

  server.registerTool(
    'echo',
    { description: 'Plain text output', inputSchema: z.object({ message: z.string() }) },
    async ({ message }) => text(`echo: ${message}`)
  );

  server.registerTool(
    'stats',
    {
      description: 'Structured output',
      inputSchema: z.object({ values: z.array(z.number()) }),
      outputSchema: z.object({ count: z.number(), mean: z.number() }),
    },
    async ({ values }) => {
      const output = { count: values.length, mean: values.reduce((a, b) => a + b, 0) / values.length };
      return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
    }
  );

  server.registerTool(
    'locate',
    {
      description: 'An argument sent as an Mcp-Param-Region header too (x-mcp-header, HTTP)',
      inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }),
    },
    async ({ region }, ctx) => {
      const header = ctx.http?.req?.headers.get('mcp-param-region') ?? 'none';
      return text(`region ${region}, header ${header}`);
    }
  );

  server.registerTool(
    'ask_name',
    { description: 'Elicits a name from the user' },
    async (ctx) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, 'name');
      if (view.kind === 'elicit' && view.action !== 'accept') return text(`No name (${view.action})`);
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name');
      if (typeof answer?.name !== 'string') {
        return inputRequired({
          inputRequests: {
            name: inputRequired.elicit({
              message: 'What is your name?',
              requestedSchema: {
                type: 'object',
                properties: { name: { type: 'string', description: 'Your name' } },
                required: ['name'],
              },
            }),
          },
        });
      }
      return text(`Hello, ${answer.name}!`);
    }
  );

  server.registerTool(
    'ask_visit',
    { description: 'URL-mode elicitation: asks the user to visit a page' },
    async (ctx) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, 'visit');
      if (view.kind !== 'elicit') {
        return inputRequired({
          inputRequests: {
            visit: inputRequired.elicitUrl({ message: 'Please sign in', url: 'https://example.com/sign-in' }),
          },
        });
      }
      return text(`visit ${view.action}`);
    }
  );

  server.registerTool(
    'ask_model',
    { description: 'Samples the client model; carries requestState across the round' },
    async (ctx) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, 'answer');
      if (view.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            answer: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
              maxTokens: 20,
            }),
          },
          requestState: 'round-1',
        });
      }
      const content = Array.isArray(view.result.content) ? view.result.content[0] : view.result.content;
      return text(`The model said: ${content.text} (state ${ctx.mcpReq.requestState() ?? 'none'})`);
    }
  );

  server.registerTool(
    'ask_roots',
    { description: 'Lists the client roots' },
    async (ctx) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, 'roots');
      if (view.kind !== 'roots') return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
      return text(view.roots.map((root) => root.uri).join(' '));
    }
  );

  server.registerTool(
    'log',
    { description: 'Logs one message at each of two levels (deprecated in 2026-07-28, still served)' },
    async (ctx) => {
      await ctx.mcpReq.log('debug', 'a debug message', 'ts');
      await ctx.mcpReq.log('warning', 'a warning', 'ts');
      return text('logged');
    }
  );

  server.registerTool(
    'count',
    { description: 'Reports progress', inputSchema: z.object({ steps: z.number().int() }) },
    async ({ steps }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: steps, message: `step ${step}` },
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return text(`counted to ${steps}`);
    }
  );

  server.registerTool(
    'slow',
    { description: 'Waits until cancelled (at most 30 s); says it started with one progress' },
    async (ctx) => {
      const { signal, id } = ctx.mcpReq;
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress: 0, message: 'started' },
        });
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 30_000);
        const onAbort = () => {
          clearTimeout(timer);
          cancelled.push(id);
          resolve();
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
      return text('slow finished');
    }
  );

  server.registerTool(
    'cancellations',
    { description: 'How many requests the SDK has seen cancelled' },
    async () => text(String(cancelled.length))
  );

  server.registerTool(
    'touch',
    { description: 'Changes the counter resource and announces a tool list change' },
    async () => {
      touches += 1;
      // An instance that outlives this request lists the new description from now on; the
      // HTTP entries' per-request instances are built with it.
      if (!perRequest(entry)) touchedTool.update({ description: `touched ${touches} times` });
      await publishChange();
      return text(`touched ${touches}`);
    }
  );

  server.registerResource(
    'counter',
    COUNTER_URI,
    { description: 'How many times touch was called', mimeType: 'text/plain', cacheHint: { ttlMs: 60_000 } },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `touched ${touches}` }] })
  );

  server.registerResource(
    'item',
    new ResourceTemplate('ts://items/{id}', {
      list: undefined,
      complete: { id: (value) => ['1', '12', '123', '2'].filter((id) => id.startsWith(value)) },
    }),
    { description: 'An item by id', mimeType: 'text/plain' },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${id}` }] })
  );

  server.registerPrompt(
    'greet',
    {
      description: 'Greets in a language',
      argsSchema: z.object({
        language: completable(z.string(), (value) =>
          ['english', 'esperanto', 'french', 'german'].filter((language) => language.startsWith(value))
        ),
      }),
    },
    ({ language }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Say hello in ${language}.` } }],
    })
  );

  if (entry.era === 'legacy') {
    // 2025-era subscriptions: the modern era has no resources/subscribe (listen streams
    // instead, served by the entries themselves).
    const subscribed = new Set();
    server.server.setRequestHandler('resources/subscribe', async (request) => {
      subscribed.add(request.params.uri);
      return {};
    });
    server.server.setRequestHandler('resources/unsubscribe', async (request) => {
      subscribed.delete(request.params.uri);
      return {};
    });
    legacyInstances.set(server, subscribed);
    const onclose = server.server.onclose;
    server.server.onclose = () => {
      legacyInstances.delete(server);
      onclose?.();
    };
  }
  return server;
}

/** Tells the 2025-era instances alive on connections or sessions about a change. */
async function publishToLegacyInstances() {
  for (const [server, subscribed] of legacyInstances) {
    if (!server.isConnected()) continue;
    server.sendToolListChanged();
    if (subscribed.has(COUNTER_URI)) await server.server.sendResourceUpdated({ uri: COUNTER_URI });
  }
}

function serveOverStdio() {
  const modern = new Set();
  publishChange = async () => {
    // A modern connection's pinned instance: serveStdio routes its change notifications onto
    // the connection's listen streams (and filters them there).
    for (const server of modern) {
      // A probe instance discarded when the client fell back to initialize is closed.
      if (!server.isConnected()) continue;
      server.sendToolListChanged();
      await server.server.sendResourceUpdated({ uri: COUNTER_URI });
    }
    await publishToLegacyInstances();
  };
  serveStdio(
    (entry) => {
      const server = buildServer(entry);
      if (entry.era === 'modern') modern.add(server);
      return server;
    },
    { onerror: (error) => console.error('serveStdio:', error.message) }
  );
}

// ------------------------------------------------------------------ HTTP (node:http <-> fetch)

function toWebRequest(req, signal) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
    else if (value !== undefined) headers.set(name, value);
  }
  const init = { method: req.method, headers, signal };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    init.body = Readable.toWeb(req);
    init.duplex = 'half';
  }
  return new Request(new URL(req.url, `http://${req.headers.host ?? '127.0.0.1'}`), init);
}

async function sendWebResponse(res, response) {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (response.body === null) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  res.on('close', () => reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The client went away: the stream was cancelled.
  } finally {
    res.end();
  }
}

function serveOverHttp() {
  const onerror = (error) => console.error('http:', error.message);
  const asShipped = createMcpHandler(buildServer, { onerror });
  const strict = createMcpHandler(buildServer, { legacy: 'reject', onerror });
  const sessions = new Map();
  // Only the instances on /sessions' 2025-era sessions outlive a request.
  perRequest = (entry) => !entry.session;

  publishChange = async () => {
    for (const handler of [asShipped, strict]) {
      handler.notify.toolsChanged();
      handler.notify.resourceUpdated(COUNTER_URI);
    }
    await publishToLegacyInstances();
  };

  async function serveSessions(request) {
    if (!(await isLegacyRequest(request))) return strict.fetch(request);
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const transport = sessions.get(id);
      if (transport === undefined) return new Response('Unknown session', { status: 404 });
      return transport.handleRequest(request);
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      onsessionclosed: (sessionId) => sessions.delete(sessionId),
    });
    await buildServer({ era: 'legacy', session: true }).connect(transport);
    return transport.handleRequest(request);
  }

  const server = http.createServer(async (req, res) => {
    const aborter = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborter.abort();
    });
    try {
      const request = toWebRequest(req, aborter.signal);
      const path = new URL(request.url).pathname;
      let response;
      if (path === '/mcp') response = await asShipped.fetch(request);
      else if (path === '/sessions') response = await serveSessions(request);
      else response = new Response('Not found', { status: 404 });
      await sendWebResponse(res, response);
    } catch (error) {
      onerror(error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    console.log(`http://127.0.0.1:${port}`);
  });
}

const mode = process.argv[2];
if (mode === 'stdio') serveOverStdio();
else if (mode === 'http') serveOverHttp();
else {
  console.error('usage: node server.mjs stdio|http');
  process.exit(2);
}
