// Runs the parity scenarios with pi's reference agent core (@earendil-works/pi-agent-core@0.79.10
// and @earendil-works/pi-ai@0.79.10) and prints one normalized JSON trace per scenario.
//
//   node run_reference.mjs <scenario dir or file>... [--only name,name]
//
// run_python.py is the same program for py_agent; tests/test_reference_parity.py compares the two.
// Keep the two files in step: the tool and hook libraries, the trace format and the normalization
// must be identical. The format is described in scenarios/README.md.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Agent } from "@earendil-works/pi-agent-core";
import { fauxAssistantMessage, registerFauxProvider, streamSimple } from "@earendil-works/pi-ai";

const SCENARIO_TIMEOUT_MS = 10000;

// ---------------------------------------------------------------------------------------------
// Normalization: timestamps and random ids become placeholders.

const RANDOM_ID = /^(tool|faux|faux-provider):\d{10,}:[0-9a-z]+$/;

function norm(value) {
	if (value === undefined) return null;
	return normalizeJson(JSON.parse(JSON.stringify(value) ?? "null"));
}

function normalizeJson(value, key) {
	if (Array.isArray(value)) return value.map((item) => normalizeJson(item));
	if (value !== null && typeof value === "object") {
		const out = {};
		for (const [k, v] of Object.entries(value)) out[k] = normalizeJson(v, k);
		return out;
	}
	if (key === "timestamp" && typeof value === "number") return "<ts>";
	if (typeof value === "string") {
		const match = RANDOM_ID.exec(value);
		if (match) return `<${match[1]}-id>`;
	}
	return value;
}

function partialShape(message) {
	return {
		role: message.role,
		stopReason: message.stopReason ?? null,
		content: message.content.map((block) =>
			block.type === "toolCall" ? { type: block.type, id: block.id, name: block.name } : { type: block.type },
		),
	};
}

function errorText(error) {
	return error instanceof Error ? error.message : String(error);
}

function sleep(ms, signal) {
	return new Promise((resolve) => {
		if (signal?.aborted) return resolve();
		const timer = setTimeout(done, ms);
		function done() {
			clearTimeout(timer);
			signal?.removeEventListener("abort", done);
			resolve();
		}
		signal?.addEventListener("abort", done, { once: true });
	});
}

function jsType(value) {
	if (value === null) return "null";
	if (Array.isArray(value)) return "array";
	return typeof value;
}

// ---------------------------------------------------------------------------------------------
// Messages given in scenarios (pi JSON) get defaults for the fields a scenario may leave out.

function makeMessage(spec) {
	const message = structuredClone(spec);
	if (message.timestamp === undefined) message.timestamp = 1000;
	if (message.role === "assistant") {
		message.api ??= "faux";
		message.provider ??= "faux";
		message.model ??= "faux-1";
		message.usage ??= {
			input: 0,
			output: 0,
			cacheRead: 0,
			cacheWrite: 0,
			totalTokens: 0,
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
		};
		message.stopReason ??= "stop";
	}
	if (message.role === "toolResult") {
		message.isError ??= false;
	}
	return message;
}

// ---------------------------------------------------------------------------------------------
// The tool library (run_python.py has the same tools).

const text = (t) => [{ type: "text", text: t }];

const STEP_PARAMETERS = {
	type: "object",
	properties: {
		id: { type: "string" },
		updates: { type: "integer" },
		ms: { type: "integer" },
		after: { type: "integer" },
		fail: { type: "boolean" },
		terminate: { type: "boolean" },
	},
	required: ["id"],
};

function stepUpdate(onUpdate, id, label, count) {
	for (let i = 1; i <= (count ?? 0); i++) onUpdate?.({ content: text(`${id} ${label} ${i}`), details: { id, [label]: i } });
}

function stepResult(params) {
	if (params.fail) throw new Error(`${params.id} failed`);
	const result = { content: text(`${params.id} done`), details: { id: params.id } };
	if (params.terminate) result.terminate = true;
	return result;
}

const TOOL_FACTORIES = {
	step: () => ({
		name: "step",
		label: "Step",
		description: "Updates, an optional abort-aware wait with later updates, then fails, returns or terminates",
		parameters: STEP_PARAMETERS,
		execute: async (_id, params, signal, onUpdate) => {
			stepUpdate(onUpdate, params.id, "update", params.updates);
			if (params.ms) {
				await sleep(params.ms, signal);
				stepUpdate(onUpdate, params.id, "after", params.after);
				if (signal?.aborted) throw new Error(`${params.id} aborted`);
			}
			return stepResult(params);
		},
	}),
	sync_step: () => ({
		name: "sync_step",
		label: "Synchronous step",
		description: "A plain (not async) function: updates, then throws, returns or terminates",
		parameters: STEP_PARAMETERS,
		execute: (_id, params, _signal, onUpdate) => {
			stepUpdate(onUpdate, params.id, "update", params.updates);
			return stepResult(params);
		},
	}),
	echo: () => ({
		name: "echo",
		label: "Echo",
		description: "Echo the value back",
		parameters: { type: "object", properties: { value: { type: "string" } }, required: ["value"] },
		execute: async (_id, params) => ({ content: text(`echoed: ${params.value}`), details: { value: params.value } }),
	}),
	fail: () => ({
		name: "fail",
		label: "Fail",
		description: "Always raises",
		parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
		execute: async (_id, params) => {
			throw new Error(params.message);
		},
	}),
	finish: () => ({
		name: "finish",
		label: "Finish",
		description: "Ends the run after this batch",
		parameters: { type: "object", properties: { value: { type: "string" } }, required: ["value"] },
		execute: async (_id, params) => ({
			content: text(`finished: ${params.value}`),
			details: { value: params.value },
			terminate: true,
		}),
	}),
	slow: () => ({
		name: "slow",
		label: "Slow",
		description: "Waits ms milliseconds (abort-aware)",
		parameters: {
			type: "object",
			properties: { value: { type: "string" }, ms: { type: "integer" } },
			required: ["value", "ms"],
		},
		execute: async (_id, params, signal) => {
			await sleep(params.ms, signal);
			if (signal?.aborted) throw new Error(`slow ${params.value} aborted`);
			return { content: text(`slow: ${params.value}`), details: { value: params.value, ms: params.ms } };
		},
	}),
	progress: () => ({
		name: "progress",
		label: "Progress",
		description: "Reports progress",
		parameters: {
			type: "object",
			properties: { steps: { type: "integer" }, late: { type: "boolean" } },
			required: ["steps"],
		},
		execute: async (_id, params, _signal, onUpdate) => {
			for (let step = 1; step <= params.steps; step++) {
				onUpdate?.({ content: text(`step ${step}/${params.steps}`), details: { step } });
				await sleep(2);
			}
			if (params.late) {
				setTimeout(() => onUpdate?.({ content: text("late"), details: { late: true } }), 1);
			}
			return { content: text(`progress done: ${params.steps}`), details: { steps: params.steps } };
		},
	}),
	coerce: () => ({
		name: "coerce",
		label: "Coerce",
		description: "Reports the types it received",
		parameters: {
			type: "object",
			properties: {
				count: { type: "number" },
				flag: { type: "boolean" },
				n: { type: "integer" },
				label: { type: "string" },
			},
			required: ["count", "flag", "n"],
		},
		execute: async (_id, params) => {
			const received = {};
			const types = {};
			for (const key of ["count", "flag", "n", "label"]) {
				if (key in params) {
					received[key] = params[key];
					types[key] = jsType(params[key]);
				}
			}
			return { content: text(JSON.stringify({ received, types })), details: { received, types } };
		},
	}),
	seq: () => ({
		name: "seq",
		label: "Sequential",
		description: "Forces sequential execution",
		parameters: {
			type: "object",
			properties: { value: { type: "string" }, ms: { type: "integer" } },
			required: ["value"],
		},
		executionMode: "sequential",
		execute: async (_id, params, signal) => {
			if (params.ms) await sleep(params.ms, signal);
			return { content: text(`seq: ${params.value}`), details: { value: params.value } };
		},
	}),
	wait_abort: () => ({
		name: "wait_abort",
		label: "Wait for abort",
		description: "Reports progress, then waits until the run is aborted",
		parameters: { type: "object", properties: {} },
		execute: async (_id, _params, signal, onUpdate) => {
			onUpdate?.({ content: text("waiting"), details: {} });
			await sleep(3000, signal);
			if (signal?.aborted) throw new Error("wait_abort: aborted");
			return { content: text("wait_abort: not aborted"), details: {} };
		},
	}),
	image: () => ({
		name: "image",
		label: "Image",
		description: "Returns an image and a caption, without details",
		parameters: { type: "object", properties: {} },
		execute: async () => ({
			content: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }, ...text("a tiny picture")],
		}),
	}),
	strict: () => ({
		name: "strict",
		label: "Strict",
		description: "A schema with enum, bounds, pattern and no additional properties",
		parameters: {
			type: "object",
			properties: {
				mode: { type: "string", enum: ["fast", "slow"] },
				level: { type: "integer", minimum: 1, maximum: 5 },
				name: { type: "string", minLength: 2, pattern: "^[a-z]+$" },
				tags: { type: "array", items: { type: "string" }, maxItems: 2 },
			},
			required: ["mode", "level"],
			additionalProperties: false,
		},
		execute: async (_id, params) => ({ content: text(`strict: ${JSON.stringify(params)}`), details: params }),
	}),
	edit: () => ({
		name: "edit",
		label: "Edit",
		description: "Applies edits (accepts the legacy oldText/newText form)",
		parameters: {
			type: "object",
			properties: {
				edits: {
					type: "array",
					items: {
						type: "object",
						properties: { oldText: { type: "string" }, newText: { type: "string" } },
						required: ["oldText", "newText"],
					},
				},
			},
			required: ["edits"],
		},
		prepareArguments: (args) => {
			if (args && typeof args === "object" && !("edits" in args) && "oldText" in args) {
				return { edits: [{ oldText: args.oldText, newText: args.newText }] };
			}
			return args;
		},
		execute: async (_id, params) => ({
			content: text(`edited ${params.edits.length}: ${params.edits.map((e) => `${e.oldText}->${e.newText}`).join(", ")}`),
			details: { edits: params.edits },
		}),
	}),
};

// ---------------------------------------------------------------------------------------------
// One scenario

function makeResponse(spec, trace) {
	if (spec.throw !== undefined) {
		return () => {
			throw new Error(spec.throw);
		};
	}
	const content = typeof spec.content === "string" ? spec.content : spec.content.map((block) => structuredClone(block));
	const message = fauxAssistantMessage(content, { stopReason: spec.stopReason, errorMessage: spec.errorMessage });
	if (spec.viaFunction) {
		return async (context, _options, state, model) => {
			trace.hooks.push({
				hook: "responseFunction",
				callCount: state.callCount,
				model: model.id,
				roles: context.messages.map((m) => m.role),
			});
			return message;
		};
	}
	return message;
}

function matches(where, event) {
	if (!where) return true;
	for (const [key, expected] of Object.entries(where)) {
		let actual;
		if (key === "role") actual = event.message?.role;
		else if (key === "toolName") actual = event.toolName;
		else if (key === "toolCallId") actual = event.toolCallId;
		else if (key === "assistantEvent") actual = event.assistantMessageEvent?.type;
		else if (key === "stopReason") actual = event.message?.stopReason;
		else throw new Error(`unknown trigger filter ${key}`);
		if (actual !== expected) return false;
	}
	return true;
}

async function runScenario(scenario) {
	const trace = { events: [], hooks: [], contexts: [] };
	const fauxOptions = scenario.faux ?? {};
	const faux = registerFauxProvider({
		tokenSize: fauxOptions.tokenSize ?? { min: 2, max: 2 },
		tokensPerSecond: fauxOptions.tokensPerSecond,
		models: fauxOptions.models,
		api: fauxOptions.api,
	});
	try {
		faux.setResponses((scenario.responses ?? []).map((r) => makeResponse(r, trace)));
		const modelFor = (id) => {
			const model = faux.getModel(id);
			if (!model) throw new Error(`no faux model ${id}`);
			return model;
		};
		const state = scenario.state ?? {};
		const options = scenario.options ?? {};
		const hooks = options.hooks ?? {};
		const agentOptions = {
			initialState: {
				systemPrompt: state.systemPrompt,
				model: state.noModel ? undefined : modelFor(state.model),
				thinkingLevel: state.thinkingLevel,
				tools: (state.tools ?? []).map((name) => TOOL_FACTORIES[name]()),
				messages: (state.messages ?? []).map(makeMessage),
			},
			toolExecution: options.toolExecution,
			steeringMode: options.steeringMode,
			followUpMode: options.followUpMode,
			sessionId: options.sessionId,
			transport: options.transport,
			thinkingBudgets: options.thinkingBudgets,
			maxRetryDelayMs: options.maxRetryDelayMs,
		};
		if (!options.defaultStreamFn) {
			agentOptions.streamFn = (model, context, streamOptions) => {
				trace.contexts.push({
					model: model.id,
					systemPrompt: context.systemPrompt ?? null,
					messages: norm(context.messages),
					tools: (context.tools ?? []).map((tool) => tool.name),
					options: {
						apiKey: streamOptions?.apiKey ?? null,
						sessionId: streamOptions?.sessionId ?? null,
						reasoning: streamOptions?.reasoning ?? null,
						transport: streamOptions?.transport ?? null,
						thinkingBudgets: streamOptions?.thinkingBudgets ?? null,
						maxRetryDelayMs: streamOptions?.maxRetryDelayMs ?? null,
						signalAborted: streamOptions?.signal?.aborted ?? null,
					},
				});
				return streamSimple(model, context, streamOptions);
			};
		}
		if (hooks.beforeToolCall) {
			const rules = hooks.beforeToolCall;
			agentOptions.beforeToolCall = async (ctx, signal) => {
				trace.hooks.push({
					hook: "beforeToolCall",
					toolCallId: ctx.toolCall.id,
					toolName: ctx.toolCall.name,
					args: norm(ctx.args),
					rawArgs: norm(ctx.toolCall.arguments),
					callInAssistant: ctx.assistantMessage.content.includes(ctx.toolCall),
					contextTailRole: ctx.context.messages[ctx.context.messages.length - 1]?.role ?? null,
					signalAborted: signal?.aborted ?? null,
				});
				const rule = rules.find((r) => r.tool === ctx.toolCall.name || r.tool === "*");
				if (!rule) return undefined;
				if (rule.raise !== undefined) throw new Error(rule.raise);
				if (rule.setArgs) Object.assign(ctx.args, rule.setArgs);
				if (rule.abort) agent.abort();
				if (rule.block !== undefined) return rule.reason === undefined ? { block: rule.block } : { block: rule.block, reason: rule.reason };
				return undefined;
			};
		}
		if (hooks.afterToolCall) {
			const rules = hooks.afterToolCall;
			agentOptions.afterToolCall = async (ctx, signal) => {
				trace.hooks.push({
					hook: "afterToolCall",
					toolCallId: ctx.toolCall.id,
					toolName: ctx.toolCall.name,
					args: norm(ctx.args),
					result: norm(ctx.result),
					isError: ctx.isError,
					signalAborted: signal?.aborted ?? null,
				});
				const rule = rules.find((r) => r.tool === ctx.toolCall.name || r.tool === "*");
				if (!rule) return undefined;
				if (rule.raise !== undefined) throw new Error(rule.raise);
				return rule.override ? structuredClone(rule.override) : undefined;
			};
		}
		if (hooks.getApiKey) {
			const keys = hooks.getApiKey.keys;
			let calls = 0;
			agentOptions.getApiKey = async (provider) => {
				trace.hooks.push({ hook: "getApiKey", provider });
				const key = keys[Math.min(calls, keys.length - 1)];
				calls++;
				if (key === "<raise>") throw new Error("getApiKey failed");
				return key ?? undefined;
			};
		}
		if (hooks.transformContext) {
			const keepLast = hooks.transformContext.keepLast;
			agentOptions.transformContext = async (messages, signal) => {
				trace.hooks.push({
					hook: "transformContext",
					count: messages.length,
					roles: messages.map((m) => m.role),
					signalIsAgentSignal: signal === agent.signal,
					signalAborted: signal?.aborted ?? null,
				});
				return messages.slice(-keepLast);
			};
		}
		if (hooks.convertToLlm) {
			const mode = hooks.convertToLlm.mode;
			agentOptions.convertToLlm = async (messages) => {
				trace.hooks.push({ hook: "convertToLlm", count: messages.length, roles: messages.map((m) => m.role) });
				if (mode === "raise") throw new Error("convertToLlm failed");
				const out = [];
				for (const m of messages) {
					if (m.role === "user" || m.role === "assistant" || m.role === "toolResult") out.push(m);
					else if (m.role === "notification" && mode === "customToUser") {
						out.push({ role: "user", content: text(`[notification] ${m.text}`), timestamp: m.timestamp });
					}
				}
				return out;
			};
		}
		if (hooks.onResponse) {
			agentOptions.onResponse = async (response, model) => {
				trace.hooks.push({ hook: "onResponse", status: response.status, headers: response.headers, model: model.id });
			};
		}
		if (hooks.prepareNextTurn) {
			const updates = hooks.prepareNextTurn.updates;
			let calls = 0;
			agentOptions.prepareNextTurn = async (signal) => {
				const update = updates[calls] ?? null;
				calls++;
				trace.hooks.push({ hook: "prepareNextTurn", call: calls, signalIsAgentSignal: signal === agent.signal });
				if (!update) return undefined;
				const out = {};
				if (update.model !== undefined) out.model = modelFor(update.model);
				if (update.thinkingLevel !== undefined) out.thinkingLevel = update.thinkingLevel;
				return out;
			};
		}

		const agent = new Agent(agentOptions);

		const snapshot = () => ({
			isStreaming: agent.state.isStreaming,
			streamingRole: agent.state.streamingMessage?.role ?? null,
			pendingToolCalls: [...agent.state.pendingToolCalls].sort(),
			errorMessage: agent.state.errorMessage ?? null,
			messageCount: agent.state.messages.length,
		});

		agent.subscribe((event, signal) => {
			const record = { type: event.type };
			switch (event.type) {
				case "message_start":
				case "message_end":
					record.message = norm(event.message);
					break;
				case "message_update": {
					// The faux provider mutates the blocks of its partial message in place while the
					// consumer lags behind by a scheduling-dependent amount, so only the block layout
					// of a partial is deterministic (the text is, too, in paced scenarios).
					record.message = scenario.recordPartialText ? norm(event.message) : partialShape(event.message);
					const e = event.assistantMessageEvent;
					record.assistantMessageEvent = norm({
						type: e.type,
						contentIndex: e.contentIndex,
						delta: e.delta,
						content: e.content,
						toolCall: e.toolCall,
						reason: e.reason,
					});
					break;
				}
				case "turn_end":
					record.message = norm(event.message);
					record.toolResults = norm(event.toolResults);
					break;
				case "agent_end":
					record.messages = norm(event.messages);
					break;
				case "tool_execution_start":
					Object.assign(record, { toolCallId: event.toolCallId, toolName: event.toolName, args: norm(event.args) });
					break;
				case "tool_execution_update":
					Object.assign(record, {
						toolCallId: event.toolCallId,
						toolName: event.toolName,
						args: norm(event.args),
						partialResult: norm(event.partialResult),
					});
					break;
				case "tool_execution_end":
					Object.assign(record, {
						toolCallId: event.toolCallId,
						toolName: event.toolName,
						result: norm(event.result),
						isError: event.isError,
					});
					break;
			}
			record.signalIsAgentSignal = signal === agent.signal;
			record.signalAborted = signal.aborted;
			record.state = snapshot();
			trace.events.push(record);
			// Actions that need no waiting (abort, steer, ...) run here, right after the event is
			// recorded, so their place in the trace does not depend on the microtask turns between
			// two listeners.
			for (const [index, trigger] of dueTriggers(event, true)) {
				trace.events.push({ trigger: index, result: runImmediateAction(trigger.do) });
			}
		});

		// Other triggers (raising, prompting, waiting) run from a listener subscribed after the recorder.
		const triggers = (scenario.triggers ?? []).map((t) => ({ ...t, seen: 0, fired: false }));
		function isImmediate(action) {
			return action.raise === undefined && runImmediateAction(action, true) !== undefined;
		}
		function dueTriggers(event, immediate) {
			const due = [];
			for (const [index, trigger] of triggers.entries()) {
				if (isImmediate(trigger.do) !== immediate) continue;
				if (trigger.fired || trigger.on !== event.type || !matches(trigger.where, event)) continue;
				trigger.seen++;
				if (trigger.seen !== (trigger.nth ?? 1)) continue;
				trigger.fired = true;
				due.push([index, trigger]);
			}
			return due;
		}
		if (triggers.some((trigger) => !isImmediate(trigger.do))) {
			agent.subscribe(async (event) => {
				for (const [index, trigger] of dueTriggers(event, false)) {
					if (trigger.do.raise !== undefined) {
						trace.events.push({ trigger: index, result: { raised: trigger.do.raise } });
						throw new Error(trigger.do.raise);
					}
					const result = await runAction(trigger.do);
					trace.events.push({ trigger: index, result });
				}
			});
		}

		function runImmediateAction(action, probe = false) {
			if (action.prompt !== undefined || action.promptMessages !== undefined) return undefined;
			if (action.continue || action.waitForIdle) return undefined;
			return probe ? true : runAction(action, true);
		}

		function runAction(action, immediate = false) {
			if (!immediate) {
				const result = runImmediateAction(action);
				if (result !== undefined) return Promise.resolve(result);
				return runWaitingAction(action);
			}
			try {
				if (action.steer !== undefined) {
					agent.steer(makeMessage(action.steer));
				} else if (action.followUp !== undefined) {
					agent.followUp(makeMessage(action.followUp));
				} else if (action.abort) {
					agent.abort();
				} else if (action.reset) {
					agent.reset();
				} else if (action.clear) {
					if (action.clear === "steering") agent.clearSteeringQueue();
					else if (action.clear === "followUp") agent.clearFollowUpQueue();
					else agent.clearAllQueues();
				} else if (action.set) {
					for (const [key, value] of Object.entries(action.set)) {
						if (key === "steeringMode") agent.steeringMode = value;
						else if (key === "followUpMode") agent.followUpMode = value;
						else if (key === "sessionId") agent.sessionId = value ?? undefined;
						else if (key === "toolExecution") agent.toolExecution = value;
						else if (key === "systemPrompt") agent.state.systemPrompt = value;
						else if (key === "thinkingLevel") agent.state.thinkingLevel = value;
						else if (key === "model") agent.state.model = modelFor(value);
						else if (key === "tools") agent.state.tools = value.map((name) => TOOL_FACTORIES[name]());
						else throw new Error(`unknown setting ${key}`);
					}
				} else if (action.appendResponses !== undefined) {
					faux.appendResponses(action.appendResponses.map((r) => makeResponse(r, trace)));
				} else {
					throw new Error(`unknown action ${JSON.stringify(action)}`);
				}
				return { ok: true, hasQueuedMessages: agent.hasQueuedMessages() };
			} catch (error) {
				return { error: errorText(error) };
			}
		}

		async function runWaitingAction(action) {
			try {
				if (action.prompt !== undefined) {
					await agent.prompt(action.prompt, action.images);
				} else if (action.promptMessages !== undefined) {
					const messages = action.promptMessages.map(makeMessage);
					await agent.prompt(action.single ? messages[0] : messages);
				} else if (action.continue) {
					await agent.continue();
				} else {
					await agent.waitForIdle();
				}
				return { ok: true, hasQueuedMessages: agent.hasQueuedMessages() };
			} catch (error) {
				return { error: errorText(error) };
			}
		}

		for (const [index, action] of (scenario.actions ?? []).entries()) {
			const result = await runAction(action);
			trace.events.push({ action: index, result });
		}
		await agent.waitForIdle();

		trace.final = {
			messages: norm(agent.state.messages),
			...snapshot(),
			streamingMessage: norm(agent.state.streamingMessage),
			hasQueuedMessages: agent.hasQueuedMessages(),
			signalIsNone: agent.signal === undefined,
			steeringMode: agent.steeringMode,
			followUpMode: agent.followUpMode,
			model: norm(agent.state.model),
			thinkingLevel: agent.state.thinkingLevel,
			systemPrompt: agent.state.systemPrompt,
			tools: agent.state.tools.map((tool) => tool.name),
			callCount: faux.state.callCount,
			pendingResponseCount: faux.getPendingResponseCount(),
		};
		return trace;
	} finally {
		faux.unregister();
	}
}

// ---------------------------------------------------------------------------------------------

function loadScenarios(paths) {
	const files = [];
	for (const path of paths) {
		if (statSync(path).isDirectory()) {
			for (const name of readdirSync(path).sort()) if (name.endsWith(".json")) files.push(join(path, name));
		} else files.push(path);
	}
	const scenarios = [];
	for (const file of files) {
		const data = JSON.parse(readFileSync(file, "utf8"));
		for (const scenario of Array.isArray(data) ? data : [data]) scenarios.push(scenario);
	}
	return scenarios;
}

async function main() {
	const args = process.argv.slice(2);
	let only;
	const paths = [];
	for (let i = 0; i < args.length; i++) {
		if (args[i] === "--only") only = new Set(args[++i].split(","));
		else paths.push(args[i]);
	}
	const results = {};
	for (const scenario of loadScenarios(paths)) {
		if (only && !only.has(scenario.name)) continue;
		let timer;
		try {
			results[scenario.name] = await Promise.race([
				runScenario(scenario),
				new Promise((_, reject) => {
					timer = setTimeout(() => reject(new Error(`scenario timed out after ${SCENARIO_TIMEOUT_MS} ms`)), SCENARIO_TIMEOUT_MS);
				}),
			]);
		} catch (error) {
			results[scenario.name] = { runnerError: errorText(error) };
		} finally {
			clearTimeout(timer);
		}
	}
	process.stdout.write(`${JSON.stringify(results)}\n`, () => process.exit(0));
}

main();
