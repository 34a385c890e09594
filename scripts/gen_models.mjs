#!/usr/bin/env node
// Regenerate py_agent/ai/models.json (the built-in model catalogue) from pi-ai's models.generated.js.
//
//   node scripts/gen_models.mjs                          fetch @earendil-works/pi-ai@0.79.10 with `npm pack`
//   node scripts/gen_models.mjs 0.80.0                   another published version
//   node scripts/gen_models.mjs path/to/pi-ai-X.tgz      a tarball from `npm pack`
//   node scripts/gen_models.mjs path/to/pi-ai/package    an unpacked package (or its dist/models.generated.js)
//
// Kept: the providers whose wire APIs py-agent implements, and only their models on those APIs. Mistral is
// `mistral-conversations` in pi-ai; its wire is Chat Completions (`POST {baseUrl}/chat/completions`), so its
// models are rewritten to `openai-completions` with the compat flags pi used for Mistral on that API.

import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PACKAGE = "@earendil-works/pi-ai";
const DEFAULT_VERSION = "0.79.10";
const PROVIDERS = ["anthropic", "openai", "google", "openrouter", "groq", "xai", "cerebras", "mistral", "deepseek"];
const APIS = new Set(["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"]);
const FIELDS = [
  "id",
  "name",
  "api",
  "provider",
  "baseUrl",
  "reasoning",
  "input",
  "cost",
  "contextWindow",
  "maxTokens",
  "headers",
  "compat",
  "thinkingLevelMap",
];
const COST_FIELDS = ["input", "output", "cacheRead", "cacheWrite"];

// pi-ai (before Mistral got its own API) on Mistral's Chat Completions endpoint: no `store`, no `developer`
// role, `max_tokens`, tool results carry `name`, thinking replayed as text, 9-character tool-call ids.
const MISTRAL_COMPAT = {
  supportsStore: false,
  supportsDeveloperRole: false,
  maxTokensField: "max_tokens",
  requiresToolResultName: true,
  requiresThinkingAsText: true,
  requiresMistralToolIds: true,
};
// pi-ai 0.79.10 providers/mistral.js `usesReasoningEffort`: these take `reasoning_effort` (pi always sends
// "high"); the other reasoning models (Magistral) think unprompted (pi's `prompt_mode: "reasoning"` only adds
// Mistral's default reasoning system prompt).
const MISTRAL_REASONING_EFFORT_MODELS = new Set(["mistral-small-2603", "mistral-small-latest", "mistral-medium-3.5"]);

function mistralToCompletions(model) {
  const effort = MISTRAL_REASONING_EFFORT_MODELS.has(model.id);
  const out = {
    ...model,
    api: "openai-completions",
    baseUrl: `${model.baseUrl.replace(/\/+$/, "")}/v1`,
    compat: { ...MISTRAL_COMPAT, supportsReasoningEffort: effort, ...(model.compat ?? {}) },
  };
  if (effort && model.reasoning && !model.thinkingLevelMap) {
    out.thinkingLevelMap = { minimal: "high", low: "high", medium: "high", high: "high" };
  }
  return out;
}

function extract(tgz, dir, version) {
  execFileSync("tar", ["xzf", tgz, "-C", dir]);
  const root = join(dir, "package");
  return {
    file: join(root, "dist", "models.generated.js"),
    version: JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version ?? version,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function locate(arg) {
  if (arg && existsSync(arg)) {
    const path = resolve(arg);
    if (path.endsWith(".tgz")) return extract(path, mkdtempSync(join(tmpdir(), "pi-ai-")), "unknown");
    let file = path;
    if (!statSync(path).isFile()) {
      file = existsSync(join(path, "dist", "models.generated.js"))
        ? join(path, "dist", "models.generated.js")
        : join(path, "models.generated.js");
    }
    const pkg = join(dirname(file), "..", "package.json");
    const version = existsSync(pkg) ? JSON.parse(readFileSync(pkg, "utf8")).version : "unknown";
    return { file, version, cleanup: () => {} };
  }
  const version = arg || DEFAULT_VERSION;
  const dir = mkdtempSync(join(tmpdir(), "pi-ai-"));
  const tgz = execFileSync("npm", ["pack", `${PACKAGE}@${version}`, "--silent", "--pack-destination", dir], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop();
  return extract(join(dir, tgz), dir, version);
}

function pick(model) {
  const out = {};
  for (const key of FIELDS) {
    if (model[key] === undefined) continue;
    // A negative price means "varies" (OpenRouter reports -1 per token for openrouter/auto): count it as 0.
    out[key] =
      key === "cost" ? Object.fromEntries(COST_FIELDS.map((k) => [k, Math.max(0, model.cost[k] ?? 0)])) : model[key];
  }
  return out;
}

const { file, version, cleanup } = locate(process.argv[2]);
try {
  const { MODELS } = await import(pathToFileURL(file).href);
  const providers = {};
  let count = 0;
  for (const provider of PROVIDERS) {
    const models = [];
    for (const raw of Object.values(MODELS[provider] ?? {})) {
      const model = raw.api === "mistral-conversations" ? mistralToCompletions(raw) : raw;
      if (!APIS.has(model.api)) continue;
      models.push(pick(model));
    }
    if (models.length === 0) throw new Error(`no models left for provider ${provider}`);
    providers[provider] = models;
    count += models.length;
  }
  // One model per line: small, diffable, and still plain JSON.
  const lines = ["{", `"source": ${JSON.stringify(`${PACKAGE}@${version} dist/models.generated.js`)},`];
  lines.push(`"generator": "scripts/gen_models.mjs",`, `"providers": {`);
  PROVIDERS.forEach((provider, i) => {
    lines.push(`${JSON.stringify(provider)}: [`);
    lines.push(providers[provider].map((m) => JSON.stringify(m)).join(",\n"));
    lines.push(i === PROVIDERS.length - 1 ? "]" : "],");
  });
  lines.push("}", "}");
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const out = join(root, "py_agent", "ai", "models.json");
  writeFileSync(out, `${lines.join("\n")}\n`);
  console.log(`wrote ${out}: ${count} models from ${PACKAGE}@${version}`);
} finally {
  cleanup();
}
