// The TypeScript SDK v2 client (@modelcontextprotocol/client) against an mcptrio server in the
// stateless era. Run by tests/interop/test_ts_client_stateless.py:
//
//   node stateless_client.mjs MODE URL            (Streamable HTTP)
//   node stateless_client.mjs MODE stdio CMD...   (stdio)
//
// MODE is "auto" (probe with server/discover) or "pin" (pinned to 2026-07-28). Prints one JSON
// object with what it saw.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, target, ...rest] = process.argv.slice(2);
const versionNegotiation = { mode: mode === 'auto' ? 'auto' : { pin: '2026-07-28' } };
const client = new Client(
  { name: 'ts-v2-interop', version: '1.0.0' },
  { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation }
);
client.setRequestHandler('elicitation/create', async () => ({
  action: 'accept',
  content: { name: 'Alice' },
}));
client.setRequestHandler('sampling/createMessage', async () => ({
  role: 'assistant',
  content: { type: 'text', text: 'Paris' },
  model: 'test',
}));
const transport =
  target === 'stdio'
    ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: { ...process.env } })
    : new StreamableHTTPClientTransport(new URL(target));
const textOf = (result) => result.content.map((block) => block.text ?? '').join('');
const seen = {};
await client.connect(transport);
seen.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
seen.era = client.getProtocolEra() ?? null;
seen.serverName = client.getServerVersion()?.name ?? null;
const tools = await client.listTools();
seen.tools = tools.tools.map((tool) => tool.name).sort();
const described = await client.callTool({ name: 'describe', arguments: { values: [1, 2, 3] } });
seen.structured = described.structuredContent;
const resource = await client.readResource({ uri: 'test://static-text' });
seen.resource = resource.contents[0].text;
const prompt = await client.getPrompt({ name: 'test_simple_prompt' });
seen.promptMessages = prompt.messages.length;
const elicited = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
seen.elicitation = textOf(elicited);
const sampled = await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} });
seen.sampling = textOf(sampled);
console.log(JSON.stringify(seen));
await client.close();
