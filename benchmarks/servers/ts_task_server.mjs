// The TypeScript SDK's side of `python -m benchmarks.task_cost`: a stdio server whose one tool,
// `add`, is a task tool (taskSupport "required") that completes at once, built the way
// server-everything builds its task tools (McpServer + InMemoryTaskStore + registerToolTask).
// Run with interop/'s Node 22 from the repository root; it imports the SDK from interop/.
import { McpServer } from "../../interop/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js";
import { StdioServerTransport } from "../../interop/node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js";
import {
  InMemoryTaskStore,
  InMemoryTaskMessageQueue,
} from "../../interop/node_modules/@modelcontextprotocol/sdk/dist/esm/experimental/tasks/index.js";
import { z } from "../../interop/node_modules/zod/index.js";

const server = new McpServer(
  { name: "bench-ts-tasks", version: "1.0.0" },
  {
    capabilities: {
      tools: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    taskStore: new InMemoryTaskStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);

server.experimental.tasks.registerToolTask(
  "add",
  {
    description: "Add two integers, as a task.",
    inputSchema: { a: z.number().int(), b: z.number().int() },
    execution: { taskSupport: "required" },
  },
  {
    createTask: async (args, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval: 0 });
      // The work: done as soon as the task exists, as mcptrio's trivial task is.
      queueMicrotask(() => {
        extra.taskStore
          .storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: String(args.a + args.b) }],
          })
          .catch((error) => console.error(error));
      });
      return { task };
    },
    getTask: async (args, extra) => await extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (args, extra) => await extra.taskStore.getTaskResult(extra.taskId),
  },
);

await server.connect(new StdioServerTransport());
