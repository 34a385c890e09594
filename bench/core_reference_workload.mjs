// pi's reference agent on the workload of core_workload.py, for Node (core_reference.mjs) and for
// Chromium (core_browser/ref.js, with pi's packages bundled by esbuild into one module).
//
//   runWorkload({ Agent, registerFauxProvider, fauxAssistantMessage, fauxToolCall }, deltas, repeats)
//
// One prompt: a tool call (round trip through an echo tool), then a reply streamed as `deltas`
// faux text deltas of 4 characters each (token size 1). A listener counts events, as a UI would.

export async function runWorkload(pi, deltas = 20000, repeats = 7) {
  const { Agent, registerFauxProvider, fauxAssistantMessage, fauxToolCall } = pi;
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

  await runOnce(Math.min(deltas, 2000)); // warm-up
  const runs = [];
  for (let i = 0; i < repeats; i++) runs.push(await runOnce(deltas));
  return runs;
}
