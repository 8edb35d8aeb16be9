import { describe, expect, it } from 'vitest';
import { labelValuesQuery, promqlRegexOf, rangeWindows, selectors, substituteVariables } from './promql.js';

// The dashboard lint trusts this scanner to find every metric a query uses; these are the shapes
// the dashboards and rules use.
describe('PromQL scanning for the lint', () => {
  it('finds the metric of an aggregation over a function, not the aggregation or grouping labels', () => {
    const found = selectors('sum by (job, server) (rate(flussonic_stream_retries_total{job=~"$job"}[$__rate_interval]))');
    expect(found).toEqual([{ metric: 'flussonic_stream_retries_total', matchers: [{ label: 'job', op: '=~', value: '$job' }] }]);
  });

  it('finds both sides of binary operations with on/group_left and set operators', () => {
    const found = selectors(
      'max by (server, stream) (a{x="1"} == 1) * on (server, stream) group_left (hw, target) b or vector(0) unless c_total offset 1w',
    );
    expect(found.map((s) => s.metric)).toEqual(['a', 'b', 'c_total']);
  });

  it('reads recording rule names with colons and keeps bool/offset/keywords out', () => {
    const found = selectors('job_server:flussonic_sessions:sum < bool 0.5 * (job_server:flussonic_sessions:sum offset 1w)');
    expect(found.map((s) => s.metric)).toEqual(['job_server:flussonic_sessions:sum', 'job_server:flussonic_sessions:sum']);
  });

  it('takes the metric of a selector written with __name__', () => {
    expect(selectors('{__name__="up", job="x"}')[0]?.metric).toBe('up');
  });

  it('is not fooled by numbers, durations and arithmetic', () => {
    expect(selectors('60 * rate(x[5m]) + 1e3 - inf')).toEqual([{ metric: 'x', matchers: [] }]);
    expect(selectors('histogram_quantile(0.99, sum by (le) (rate(h_bucket[1m])))').map((s) => s.metric)).toEqual(['h_bucket']);
  });

  it('lists range windows', () => {
    expect(rangeWindows('rate(a[$__rate_interval]) / increase(b[5m]) + c offset 1w')).toEqual(['$__rate_interval', '5m']);
  });

  it('splits label_values() variable queries', () => {
    expect(labelValuesQuery('label_values(flussonic_up{job=~"$job"}, server)')).toEqual({
      selector: 'flussonic_up{job=~"$job"}',
      label: 'server',
    });
  });

  it('substitutes Grafana variables and fails on an unknown one', () => {
    expect(substituteVariables('rate(a{job=~"$job",s=~"${server}"}[$__rate_interval])', { job: 'j', server: 's', __rate_interval: '4s' })).toBe(
      'rate(a{job=~"j",s=~"s"}[4s])',
    );
    expect(() => substituteVariables('a{x=~"$nope"}', {})).toThrow(/\$nope/);
  });

  it('renders values as an escaped regular expression, as Grafana does for multi-select', () => {
    expect(promqlRegexOf(['c/01'])).toBe('c\\\\/01');
    expect(promqlRegexOf(['a.b', 'c'])).toBe('(a\\\\.b|c)');
  });
});
