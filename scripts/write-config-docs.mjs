#!/usr/bin/env node
// Writes config.schema.json and docs/configuration.md from the built config schema
// (`npm run docs:config` builds first).
import { writeFileSync } from 'node:fs';
import { configJsonSchemaText } from '../dist/config/index.js';
import { renderConfigMarkdown } from '../dist/docs/config-markdown.js';

for (const [file, text] of [['../config.schema.json', configJsonSchemaText()], ['../docs/configuration.md', renderConfigMarkdown()]]) {
  const target = new URL(file, import.meta.url);
  writeFileSync(target, text);
  console.log(`wrote ${target.pathname}`);
}
