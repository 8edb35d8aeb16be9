#!/usr/bin/env node
// Writes METRICS.md and the streams budget of docs/cardinality.md from the built family
// declarations (`npm run docs:metrics` builds first).
import { readFileSync, writeFileSync } from 'node:fs';
import { withStreamsBudget } from '../dist/docs/cardinality-markdown.js';
import { renderMetricsMarkdown } from '../dist/docs/metrics-markdown.js';

const metrics = new URL('../METRICS.md', import.meta.url);
writeFileSync(metrics, renderMetricsMarkdown());
console.log(`wrote ${metrics.pathname}`);

const cardinality = new URL('../docs/cardinality.md', import.meta.url);
writeFileSync(cardinality, withStreamsBudget(readFileSync(cardinality, 'utf8')));
console.log(`wrote the streams budget of ${cardinality.pathname}`);
