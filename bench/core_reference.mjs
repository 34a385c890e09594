// pi's reference agent core on the workload of core_workload.py, in Node; prints one JSON line.
//   node bench/core_reference.mjs NODE_MODULES_DIR [DELTAS] [REPEATS]
// NODE_MODULES_DIR holds @earendil-works/pi-agent-core and pi-ai 0.79.10 (bench/node_modules,
// installed by `npm ci` in bench/; tests/reference/node_modules has the same pins).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { runWorkload } from "./core_reference_workload.mjs";

const [modulesDir, deltasArg = "20000", repeatsArg = "7"] = process.argv.slice(2);
const load = (pkg) => import(pathToFileURL(join(modulesDir, pkg, "dist", "index.js")).href);
const { Agent } = await load("@earendil-works/pi-agent-core");
const { registerFauxProvider, fauxAssistantMessage, fauxToolCall } = await load("@earendil-works/pi-ai");
const runs = await runWorkload(
  { Agent, registerFauxProvider, fauxAssistantMessage, fauxToolCall },
  Number(deltasArg),
  Number(repeatsArg),
);
console.log(JSON.stringify({ runs }));
