/**
 * The PromQL scanning of the dashboard and rule lint lives with the generator
 * (grafana/generator/promql.ts), which uses it to find the families each panel reads: one
 * scanner for both.
 */
export * from '../../grafana/generator/promql.js';
