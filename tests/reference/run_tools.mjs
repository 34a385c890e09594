// Runs pi's own workspace tools (@earendil-works/pi-coding-agent@0.79.10: read, write, edit, ls,
// grep, find) on a folder and prints what each call returned, as JSON.
//
//   node run_tools.mjs <folder> <calls.json>
//
// calls.json is a list of {tool, args}; they run in order (write and edit change the folder).
// Each result is {texts: [...]} (the content's text blocks; an image block as "<image>") or
// {error: message}. The package's entry needs Node 22, so the tool modules are imported directly.
// grep and find run ripgrep and fd from PATH (tests/tools/test_tools_parity.py sets it up).

import { readFileSync } from "node:fs";

const BASE = "./node_modules/@earendil-works/pi-coding-agent/dist/core/tools/";
const FACTORIES = {};
for (const name of ["read", "write", "edit", "ls", "grep", "find"]) {
	const module = await import(`${BASE}${name}.js`);
	FACTORIES[name] = module[`create${name[0].toUpperCase()}${name.slice(1)}Tool`];
}

const [folder, callsFile] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(callsFile, "utf8"));
const results = [];
for (const call of calls) {
	try {
		const tool = FACTORIES[call.tool](folder);
		const result = await tool.execute("call", call.args, undefined, undefined);
		results.push({ texts: result.content.map((block) => (block.type === "text" ? block.text : `<${block.type}>`)) });
	} catch (error) {
		results.push({ error: error instanceof Error ? error.message : String(error) });
	}
}
process.stdout.write(`${JSON.stringify(results)}\n`, () => process.exit(0));
