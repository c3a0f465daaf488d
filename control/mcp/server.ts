/**
 * The MCP server for one caller: the SDK's low-level `Server` with tools/list and tools/call handlers, so the tool
 * schemas stay TypeBox/JSON Schema (McpServer.registerTool wants a Standard Schema such as Zod).
 */
import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type Tool as SdkTool } from "@modelcontextprotocol/server";
import { toAppError } from "../../shared/errors.ts";
import type { Caller, Deps } from "../deps.ts";
import { LINK_TOOLS, toJsonSchema, type LinkTool } from "./tools.ts";

/**
 * A tools/list entry. The SDK's `Tool` types the schemas as trees of JSON values, which toJsonSchema's TypeBox
 * output is without being typed so; the handler hands the list over as the SDK's type.
 */
type Tool = Omit<SdkTool, "inputSchema" | "outputSchema"> & { inputSchema: object; outputSchema?: object };

export const SERVER_INFO = { name: "clink", version: "1.0.0" };

const INSTRUCTIONS =
  "Manage the short links of one clink account: create (one or in bulk), list, read, update and delete links, " +
  "set country/device redirect rules, weighted A/B destinations and social preview cards, and read click statistics. " +
  "Links are identified by their slug. A failed call returns isError: true with a problem object (`code`, `detail`, " +
  "and `errors` listing each invalid field) in its text.";

/** tools/list answer, built once: the schemas never change while the process runs. */
const TOOL_LIST: Tool[] = LINK_TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: toJsonSchema(t.input),
  outputSchema: toJsonSchema(t.output),
  annotations: { title: t.title, ...t.annotations },
}));

export const TOOLS_BY_NAME = new Map<string, LinkTool>(LINK_TOOLS.map((t) => [t.name, t]));

interface CallToolParams {
  name: string;
  arguments?: Record<string, unknown>;
}

/**
 * Runs one tool. Success: the object as `structuredContent` plus the same JSON as text. Failure of any kind
 * (invalid input, unknown slug, slug taken, storage down): `isError: true` with the problem object as JSON text.
 * The problem is deliberately not put in `structuredContent`: clients validate structuredContent against the
 * tool's outputSchema whenever it is present (the SDK Client does, even on isError results) and a problem is no
 * link object.
 */
export async function callTool(deps: Deps, caller: Caller, tool: LinkTool, args: Record<string, unknown>): Promise<CallToolResult> {
  try {
    const result = (await tool.run(deps, caller, args)) as Record<string, unknown>;
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
  } catch (e) {
    const problem = toAppError(e).toProblem();
    return { content: [{ type: "text", text: JSON.stringify(problem) }], isError: true };
  }
}

/**
 * A fresh MCP server whose tools act for `caller`. One serves one HTTP request (routes.ts): every tool answers at
 * once and the server never speaks first, so nothing is kept between requests, in any protocol revision.
 */
export function getServer(deps: Deps, caller: Caller): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler("tools/list", () => ({ tools: TOOL_LIST as SdkTool[] }));
  // The Server has checked the request's params (a string name, an object of arguments) before calling this.
  server.setRequestHandler("tools/call", (request) => {
    const params = request.params as CallToolParams;
    const tool = TOOLS_BY_NAME.get(params.name);
    // An unknown tool name is a protocol error (MCP spec, tools "Error Handling"), not a tool result.
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${params.name.slice(0, 100)}`);
    return callTool(deps, caller, tool, params.arguments ?? {});
  });
  return server;
}
