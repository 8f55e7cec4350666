// A reload in the middle of an answer, through the official JS client as DeerFlow's UI does it:
// the history page (fetch of /messages/page), then useStream's re-join (joinStream with
// lastEventId "-1"). Prints "CREATED" when the run started and waits for a line on stdin (the
// test sends it once the partial answer was streamed: the reload comes after it), prints
// "PARTIAL <text>" once the re-joined stream gave the partial answer (the test then lets the
// model finish), then "ALL OK". Run by tests/gateway/test_js_sdk.py.
import { Client } from "@langchain/langgraph-sdk";
import { createInterface } from "node:readline";
const headers = { Authorization: `Bearer ${process.env.TOKEN}` };
const client = new Client({ apiUrl: process.env.API, defaultHeaders: headers });
const ok = (c, m) => { if (!c) { console.error("FAIL:", m); process.exit(1); } else console.log("ok:", m); };
const msg = (text) => ({ messages: [{ type: "human", content: [{ type: "text", text }] }] });
const opts = { streamMode: ["values", "messages-tuple"], onDisconnect: "continue" };

const tid = (await client.threads.create({ threadId: crypto.randomUUID() })).thread_id;
for await (const _ of client.runs.stream(tid, "lead_agent", { input: msg("hi"), ...opts })) {}
const res = await fetch(`${process.env.API}/threads/${tid}/messages/page`, { headers });
const page = await res.json();
ok(res.ok && Array.isArray(page.data) && page.has_more === false && page.next_before_seq === null, "messages/page");
ok(page.data.map(r => r.seq).join() === "1,2" && page.data[1].content.type === "ai", "rows by seq");
const run = await client.runs.create(tid, "lead_agent", { input: msg("go"), ...opts });
console.log("CREATED");
const rl = createInterface({ input: process.stdin });
await rl[Symbol.asyncIterator]().next();  // the page is reloaded now
rl.close();
let text = "", partial = false, last;
for await (const part of client.runs.joinStream(tid, run.run_id, { lastEventId: "-1", streamMode: opts.streamMode })) {
  last = part;
  if (part.event === "messages" && part.data[0].type === "AIMessageChunk") text += part.data[0].content;
  if (text && !partial) { partial = true; console.log("PARTIAL " + text.trim()); }
}
ok(partial && last.event !== "error", "re-joined from the start: " + text);
console.log("ALL OK");
