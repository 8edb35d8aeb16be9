/** The variables the dashboards share: data source, scrape job, Flussonic server, stream. */
import { datasourceVariable, queryVariable, type Variable } from '../board.js';

export const datasource = (): Variable => datasourceVariable();

export const job = (): Variable =>
  queryVariable('job', 'Job', 'Prometheus scrape job(s) of flussonic-exporter.', 'flussonic_exporter_build_info');

/** Servers as the streams, sessions and server collectors know them (configured names). */
export const server = (): Variable =>
  queryVariable('server', 'Server', 'Flussonic server(s), by their configured name.', 'flussonic_up{job=~"$job"}');

export const stream = (): Variable =>
  queryVariable(
    'stream',
    'Stream',
    'Stream name(s) on the selected servers.',
    'flussonic_stream_alive{job=~"$job",server=~"$server"}',
  );
