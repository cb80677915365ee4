// Reads {"schemas": {name: path}, "docs": [{"schema": name, "file": path, "value": any}]} on stdin and
// prints, per doc, {"file", "valid", "errors": [first three messages]} as one JSON array.
import Ajv from "ajv";
import { readFileSync } from "node:fs";

const input = JSON.parse(readFileSync(0, "utf8"));
// strict: false — tool argument schemas carry keywords ajv does not know (e.g. `format: uint32`).
const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
const compiled = {};
for (const [name, path] of Object.entries(input.schemas)) {
  compiled[name] = ajv.compile(JSON.parse(readFileSync(path, "utf8")));
}
const out = input.docs.map((d) => {
  const validate = compiled[d.schema];
  const valid = validate(d.value);
  const errors = (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath} ${e.message}`);
  return { file: d.file, valid, errors };
});
process.stdout.write(JSON.stringify(out));
