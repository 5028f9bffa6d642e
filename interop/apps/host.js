// A minimal MCP Apps host, built on @modelcontextprotocol/ext-apps' AppBridge: it connects to an
// MCP server over Streamable HTTP from the browser, reads the view of the tool named in the
// page's query (?mcp=/mcp&tool=NAME&args=JSON), renders it in a sandboxed iframe, calls the tool
// and hands the view its result; the view's own tools/call go through the bridge to the server.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const MIME = "text/html;profile=mcp-app";
const state = (window.hostState = { steps: [], error: null });

async function main() {
  const query = new URLSearchParams(location.search);
  const toolName = query.get("tool");
  const args = JSON.parse(query.get("args") || "{}");
  const client = new Client(
    { name: "mcptrio-apps-test-host", version: "1.0.0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(query.get("mcp"), location.href)));
  state.steps.push("connected");
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === toolName);
  const uri = getToolUiResourceUri(tool);
  const read = await client.readResource({ uri });
  const view = read.contents.find((c) => c.uri === uri && c.mimeType === MIME);
  state.steps.push("view-read");

  const iframe = document.createElement("iframe");
  iframe.id = "app";
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText = "width: 640px; height: 420px; border: 1px solid #888";
  document.body.append(iframe);

  const bridge = new AppBridge(
    client,
    { name: "mcptrio-apps-test-host", version: "1.0.0" },
    { serverTools: {}, openLinks: {}, logging: {} },
  );
  bridge.oninitialized = async () => {
    try {
      state.steps.push("view-initialized");
      await bridge.sendToolInput({ arguments: args });
      const result = await client.callTool({ name: toolName, arguments: args });
      await bridge.sendToolResult(result);
      state.steps.push("result-sent");
    } catch (error) {
      state.error = String(error);
    }
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = view.text;
}

main().catch((error) => {
  state.error = String(error && error.stack ? error.stack : error);
});
