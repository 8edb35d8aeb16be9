#!/usr/bin/env node
// Writes config.schema.json, docs/configuration.md and config.example.yaml from the built config schema
// (`npm run docs:config` builds first).
import { writeFileSync } from 'node:fs';
import { configJsonSchemaText } from '../dist/docs/config-schema.js';
import { renderConfigExample } from '../dist/docs/config-example.js';
import { renderConfigMarkdown } from '../dist/docs/config-markdown.js';

for (const [file, text] of [['../config.schema.json', configJsonSchemaText()], ['../docs/configuration.md', renderConfigMarkdown()], ['../config.example.yaml', renderConfigExample()]]) {
  const target = new URL(file, import.meta.url);
  writeFileSync(target, text);
  console.log(`wrote ${target.pathname}`);
}
