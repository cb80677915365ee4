// Validates the HAR file named by the first argument against the HAR 1.2 JSON schemas
// (npm's har-validator); exits 1 printing the schema's errors when it is not valid.
const { readFileSync } = require("node:fs");
const validate = require("har-validator");

const file = process.argv[2];
if (!file) {
  console.error("usage: node validate.js FILE.har");
  process.exit(2);
}
let har;
try {
  har = JSON.parse(readFileSync(file, "utf8"));
} catch (e) {
  console.error(`${file}: ${e.message}`);
  process.exit(1);
}
validate
  .har(har)
  .then(() => console.log(`${file}: valid HAR 1.2 (${har.log.entries.length} entries)`))
  .catch((e) => {
    console.error(`${file}: not valid HAR 1.2`);
    for (const err of e.errors ?? [e]) {
      console.error(`  ${err.dataPath ?? ""} ${err.message ?? err} ${err.params ? JSON.stringify(err.params) : ""}`);
    }
    process.exit(1);
  });
