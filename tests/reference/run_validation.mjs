// Runs pi-ai's validateToolArguments (@earendil-works/pi-ai@0.79.10) on argument-validation cases
// and prints {case name: {ok: JSON text} | {error: text}} as JSON.
//
//   node run_validation.mjs <cases.json>
//
// A case is {name, schema, typebox, arguments}. With `typebox` the schema is built with TypeBox's
// own builders (as pi's tools are), so pi converts the arguments with Value.Convert first; the
// built schema must serialize to `schema` exactly (else the case reports `schemaMismatch`).
// tests/test_validation_parity.py runs py_agent on the same cases and compares.

import { readFileSync } from "node:fs";
import { validateToolArguments } from "@earendil-works/pi-ai";
import { Type } from "typebox";

const SIMPLE_OPTIONS = ["minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "description", "enum"];

function options(schema) {
	const out = {};
	for (const key of SIMPLE_OPTIONS) if (key in schema) out[key] = schema[key];
	return out;
}

function typebox(schema) {
	if (Array.isArray(schema.anyOf)) return Type.Union(schema.anyOf.map(typebox), options(schema));
	if ("const" in schema) return Type.Literal(schema.const, options(schema));
	if (schema.type === undefined && Array.isArray(schema.enum)) return Type.Enum(schema.enum);
	switch (schema.type) {
		case "object": {
			const required = new Set(schema.required ?? []);
			const properties = {};
			for (const [key, sub] of Object.entries(schema.properties ?? {})) {
				properties[key] = required.has(key) ? typebox(sub) : Type.Optional(typebox(sub));
			}
			const extra = options(schema);
			if (schema.additionalProperties === false) extra.additionalProperties = false;
			else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
				extra.additionalProperties = typebox(schema.additionalProperties);
			}
			return Type.Object(properties, extra);
		}
		case "array":
			return Type.Array(typebox(schema.items ?? {}), options(schema));
		case "string":
			return Type.String(options(schema));
		case "number":
			return Type.Number(options(schema));
		case "integer":
			return Type.Integer(options(schema));
		case "boolean":
			return Type.Boolean(options(schema));
		case "null":
			return Type.Null(options(schema));
		default:
			return Type.Unknown(options(schema));
	}
}

function canonical(value) {
	if (Array.isArray(value)) return value.map(canonical);
	if (value !== null && typeof value === "object") {
		return Object.fromEntries(
			Object.keys(value)
				.sort()
				.map((key) => [key, canonical(value[key])]),
		);
	}
	return value;
}

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = {};
for (const item of cases) {
	let parameters = item.schema;
	if (item.typebox) {
		parameters = typebox(item.schema);
		const built = JSON.stringify(canonical(JSON.parse(JSON.stringify(parameters))));
		if (built !== JSON.stringify(canonical(item.schema))) {
			results[item.name] = { schemaMismatch: built };
			continue;
		}
	}
	try {
		const value = validateToolArguments({ name: "t", parameters }, { name: "t", arguments: item.arguments });
		results[item.name] = { ok: JSON.stringify(value) };
	} catch (error) {
		results[item.name] = { error: error instanceof Error ? error.message : String(error) };
	}
}
process.stdout.write(`${JSON.stringify(results)}\n`, () => process.exit(0));
