// DeerFlow's web UI chat flow through the official JS client (@langchain/langgraph-sdk), in the
// order the UI's useStream hook calls it. Run by tests/gateway/test_js_sdk.py; prints "ALL OK".
import { Client } from "@langchain/langgraph-sdk";
const client = new Client({ apiUrl: process.env.API, defaultHeaders: { Authorization: `Bearer ${process.env.TOKEN}` } });
const ok = (c, m) => { if (!c) { console.error("FAIL:", m); process.exit(1); } else console.log("ok:", m); };
const msg = (text, files) => ({ messages: [{ type: "human", content: [{ type: "text", text }], additional_kwargs: files ? { files } : {} }] });
const opts = { streamMode: ["values", "messages-tuple", "custom"], config: { recursion_limit: 1000 },
  context: { mode: "pro", thinking_enabled: true, is_plan_mode: true, subagent_enabled: false, reasoning_effort: "medium" },
  onDisconnect: "continue", streamResumable: false };
async function collect(it) { const out = []; for await (const p of it) out.push(p); return out; }

const asst = await client.assistants.search({ graphId: "lead_agent", limit: 10 });
ok(asst[0].assistant_id === "lead_agent", "assistants.search");
ok((await client.assistants.get("lead_agent")).graph_id === "lead_agent", "assistants.get");
await client.assistants.getGraph("lead_agent"); await client.assistants.getSchemas("lead_agent");
ok(true, "assistants.getGraph/getSchemas");
const thread = await client.threads.create({ threadId: crypto.randomUUID() });
const tid = thread.thread_id;
ok((await client.threads.getHistory(tid, { limit: 1 })).length === 0, "empty history of a new thread");
let runId;
let parts = await collect(client.runs.stream(tid, "lead_agent", { input: msg("hi"), ...opts, onRunCreated: (m) => { runId = m.run_id; } }));
ok(parts[0].event === "metadata" && parts.at(-1).event === "end" && runId, "first message streamed, run id from Content-Location");
const text = parts.filter(p => p.event === "messages").map(p => p.data[0]).filter(c => c.type === "AIMessageChunk").map(c => c.content).join("");
ok(text === "Hello from Antler", "messages-tuple deltas: " + text);
const head = (await client.threads.getHistory(tid, { limit: 1 }))[0].checkpoint;
parts = await collect(client.runs.stream(tid, "lead_agent", { input: msg("and then?"), ...opts, checkpoint: head }));
ok(!parts.some(p => p.event === "error") && parts.at(-1).event === "end", "second message with the head checkpoint");
await client.threads.updateState(tid, { values: { title: "Renamed by the UI" } });
const found = await client.threads.search({ limit: 20 });
ok(found.find(t => t.thread_id === tid).values.title === "Renamed by the UI", "rename via updateState shows in search");
const run = await client.runs.create(tid, "lead_agent", { input: msg("go"), onDisconnect: "continue" });
for (let i = 0; i < 100 && (await client.runs.get(tid, run.run_id)).status === "pending"; i++) await new Promise(r => setTimeout(r, 50));
await client.runs.cancel(tid, run.run_id);
ok(true, "cancel an active run");
await client.runs.join(tid, run.run_id);
ok((await client.runs.get(tid, run.run_id)).status === "interrupted", "run interrupted");
try { await client.runs.cancel(tid, run.run_id); ok(false, "late cancel should be 409"); }
catch (e) { ok(String(e.message ?? e).includes("is not cancellable") || e.status === 409, "late cancel: " + (e.message ?? e)); }
const joined = await collect(client.runs.joinStream(tid, run.run_id));
ok(joined.at(-1).event === "end", "joinStream of a finished run ends");
const runs = await client.runs.list(tid);
ok(runs.length === 3, "runs.list: " + runs.map(r => r.status).join(","));
console.log("ALL OK");
