#!/usr/bin/env node
// A tiny MCP server over stdio, newline-delimited JSON-RPC, no
// dependencies: initialize, ping, tools/list and tools/call of one echo
// tool. It answers with its greeting argument and whether ECHO_API_KEY
// reached it, so a test sees the bundle's user_config arrive.
const readline = require("node:readline");

const i = process.argv.indexOf("--greeting");
const greeting = i >= 0 ? process.argv[i + 1] : "";
const keySet = (process.env.ECHO_API_KEY || "") !== "";

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

const tools = [
  {
    name: "echo",
    description: "Echoes its message back",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    },
  },
];

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    return;
  }
  if (req.id === undefined) return; // a notification
  const reply = (result) => send({ jsonrpc: "2.0", id: req.id, result });
  switch (req.method) {
    case "initialize":
      reply({
        protocolVersion: (req.params && req.params.protocolVersion) || "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "mcptray-echo", version: "1.0.0" },
      });
      break;
    case "ping":
      reply({});
      break;
    case "tools/list":
      reply({ tools });
      break;
    case "tools/call": {
      const msg = (req.params && req.params.arguments && req.params.arguments.message) || "";
      reply({ content: [{ type: "text", text: `${greeting}: ${msg} (key ${keySet ? "set" : "unset"})` }] });
      break;
    }
    default:
      send({ jsonrpc: "2.0", id: req.id, error: { code: -32601, message: `Method not found: ${req.method}` } });
  }
});
