#!/usr/bin/env node
// Writes METRICS.md from the built catalogue (`npm run docs:metrics` builds first).
import { writeFileSync } from 'node:fs';
import { renderMetricsMarkdown } from '../dist/docs/metrics-markdown.js';

const target = new URL('../METRICS.md', import.meta.url);
writeFileSync(target, renderMetricsMarkdown());
console.log(`wrote ${target.pathname}`);
