// pi's reference agent core on the workload of core_workload.py; prints one JSON line.
//   node bench/core_reference.mjs REFERENCE_DIR [DELTAS] [REPEATS]
// REFERENCE_DIR holds node_modules with @earendil-works/pi-agent-core and pi-ai 0.79.10
// (tests/reference/, installed by `npm ci` there).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [refDir, deltasArg = "20000", repeatsArg = "7"] = process.argv.slice(2);
const load = (pkg) => import(pathToFileURL(join(refDir, "node_modules", pkg, "dist", "index.js")).href);
const { Agent } = await load("@earendil-works/pi-agent-core");
const { registerFauxProvider, fauxAssistantMessage, fauxToolCall } = await load("@earendil-works/pi-ai");
const deltas = Number(deltasArg);
const repeats = Number(repeatsArg);

const tool = {
  name: "echo",
  label: "Echo",
  description: "echo",
  parameters: { type: "object", properties: { value: { type: "string" } } },
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

async function runOnce(n) {
  const faux = registerFauxProvider({ tokenSize: { min: 1, max: 1 } });
  try {
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("echo", { value: "hi" }, { id: "t1" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("abcd".repeat(n)),
    ]);
    const agent = new Agent({ initialState: { model: faux.getModel(), tools: [tool] } });
    let events = 0;
    agent.subscribe(() => {
      events++;
    });
    const started = performance.now();
    await agent.prompt("go");
    const seconds = (performance.now() - started) / 1000;
    return { events, seconds, us_per_delta: (seconds / n) * 1e6 };
  } finally {
    faux.unregister();
  }
}

await runOnce(Math.min(deltas, 2000));
const runs = [];
for (let i = 0; i < repeats; i++) runs.push(await runOnce(deltas));
console.log(JSON.stringify({ runs }));
