// esbuild's entry for the Chromium run of pi's reference agent (bench/core_overhead.py bundles
// it into pi-bundle.mjs): only what the workload uses.
export { Agent } from "@earendil-works/pi-agent-core";
export { registerFauxProvider, fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
