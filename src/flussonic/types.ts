/**
 * What the streams and server collectors read from Flussonic API v3, described field by field.
 *
 * These types describe; they do not promise. Every leaf is `unknown` because the JSON arrives
 * unchecked: a field may be absent, `null`, or of a type the schema did not announce (a string
 * where a number belongs). The interfaces give the field names to the compiler (a typo is an
 * error) and say in comments what each field should hold and in which unit; the collectors check
 * every value before they use it (src/collect/fields.ts) and hand values of the wrong type to
 * SeriesWriter, which records them as shape problems.
 *
 * Sources: flussonic-public-23.05-637.json (`stream_stats`, `push_stats`, `server_stats`,
 * `partition_stats`, `transcoder_device_stats`), the 2021 runtime sample of openapi_handler and the
 * 2025 go-flussonic examples (../shared/flussonic-api). Two stats shapes exist:
 * - flat, up to 23.x/24.x: `bytes_in`, `client_count`, `retry_count`, `input_error_rate`,
 *   `out_bandwidth` in `stats`; push counters in `pushes[].stats`;
 * - nested, 2025: `stats.input` (bytes, error_rate, input_switches, errors_*), `stats.transcoder`,
 *   `stats.push[]`, `online_clients`. `stats.input` is the stream's `input_stats` aggregated over
 *   all its inputs (go-flussonic InputStats); each input's own is in `inputs[i].stats`.
 * A response may carry fields of both; the collectors prefer the newer one, per the catalogue.
 */

/** One item of GET /streams (only the fields the streams collector selects). */
export interface StreamItem {
  /** string; the identifier, may contain `/`. */
  readonly name?: unknown;
  /** string; free text, goes only on flussonic_stream_info. */
  readonly title?: unknown;
  /** string: config | user | remote | external. */
  readonly named_by?: unknown;
  /** StreamStats. */
  readonly stats?: unknown;
  /** FlatPush[]: configured pushes; in the flat shape their counters are in `pushes[i].stats`. */
  readonly pushes?: unknown;
  /** Configured inputs; in the flat shape (and in 2025) their runtime is `inputs[i].stats` (stream-inputs-map.ts). */
  readonly inputs?: unknown;
}

/** `stats` of a stream, flat and nested fields side by side. */
export interface StreamStats {
  /** boolean: the stream receives frames. */
  readonly alive?: unknown;
  /** string: running | waiting | error. */
  readonly status?: unknown;
  /** integer, kbit/s (format `speed`). */
  readonly bitrate?: unknown;
  /** integer, kbit/s. */
  readonly input_bitrate?: unknown;
  /** integer, kbit/s: bitrate of the output media. */
  readonly output_bitrate?: unknown;
  /** integer, kbit/s: traffic to all clients (flat shape). */
  readonly out_bandwidth?: unknown;
  /** integer, bits/s (format `bps`): traffic to all clients. */
  readonly output_bandwidth?: unknown;
  /** integer, bytes received (flat shape). */
  readonly bytes_in?: unknown;
  /** integer, bytes sent to clients. */
  readonly bytes_out?: unknown;
  /** integer: clients now (newer). */
  readonly online_clients?: unknown;
  /** integer: clients now (deprecated; null seen in the 2021 sample). */
  readonly client_count?: unknown;
  /** integer: input retries. */
  readonly retry_count?: unknown;
  /** number: dropped input packets per second (flat shape). */
  readonly input_error_rate?: unknown;
  /** number, milliseconds without frames from the input. */
  readonly ts_delay?: unknown;
  /** number, Unix ms of the last frame. */
  readonly last_dts_at?: unknown;
  /** integer, Unix ms when the stream was opened. */
  readonly opened_at?: unknown;
  /** number, Unix ms of the last client access. */
  readonly last_access_at?: unknown;
  /** boolean: the stream runs on its backup input. */
  readonly backup_running?: unknown;
  /** boolean. */
  readonly running_transcoder?: unknown;
  /** boolean. */
  readonly transcoder_overloaded?: unknown;
  /** boolean. */
  readonly dvr_enabled?: unknown;
  /** DvrInfo. */
  readonly dvr_info?: unknown;
  /** integer, percent. */
  readonly dvr_replication?: unknown;
  /** boolean. */
  readonly dvr_replication_running?: unknown;
  /** boolean. */
  readonly publish_enabled?: unknown;
  /** MediaInfo, or null for a stream without input (2021 sample). */
  readonly media_info?: unknown;
  /** StreamInputStats (nested shape). */
  readonly input?: unknown;
  /** TranscoderStats (nested shape). */
  readonly transcoder?: unknown;
  /** PushCounters[] (nested shape), index-aligned with the stream's `pushes`. */
  readonly push?: unknown;
  /** InputStats[] (nested shape), index-aligned with the stream's `inputs`. */
  readonly inputs?: unknown;
}

/**
 * `stats.input` of the nested (2025) shape: the `input_stats` schema of each input, here aggregated
 * over all the stream's inputs, so its counters are the stream's and go on across input switches
 * (go-flussonic InputStats: `bytes` "received by this stream from live sources ... will sum all
 * inputs working together"; `input_switches` "Aggregated: how many times this stream has switched
 * between different inputs").
 */
export interface StreamInputStats {
  /** integer, bytes the stream received from its inputs, all together, before transcoding. */
  readonly bytes?: unknown;
  /** number: dropped packets per second. */
  readonly error_rate?: unknown;
  /** integer: switches of the stream between its inputs. */
  readonly input_switches?: unknown;
  /** `errors_<kind>`: integer counters of all the stream's inputs, one per kind of input error; read by prefix. */
  readonly [errorsField: `errors_${string}`]: unknown;
}

/** `stats.transcoder` of the nested (2025) shape. */
export interface TranscoderStats {
  /** string: cpu | nvenc | qsv | coder | ... */
  readonly hw?: unknown;
  /** string: uhdtv | hdtv | sdtv_pal | sdtv_ntsc. */
  readonly target?: unknown;
  /** integer: output video tracks. */
  readonly qualities?: unknown;
  /** integer. */
  readonly restarts?: unknown;
  /** integer. */
  readonly frames?: unknown;
  /** TranscoderTrackStats[]. */
  readonly tracks?: unknown;
  readonly input_ad_announces?: unknown;
  readonly output_ad_announces?: unknown;
  readonly output_shifted_ad_announces?: unknown;
  readonly input_ad_immediate?: unknown;
  readonly output_ad_immediate?: unknown;
}

export interface TranscoderTrackStats {
  /** string. */
  readonly track_id?: unknown;
  /** integer. */
  readonly dup_frames_added?: unknown;
  /** integer. */
  readonly overlimit_frames_removed?: unknown;
}

export interface DvrInfo {
  /** integer, seconds of archive. */
  readonly depth?: unknown;
  /** integer, bytes of archive. */
  readonly bytes?: unknown;
}

export interface MediaInfo {
  /** MediaTrack[]. */
  readonly tracks?: unknown;
}

export interface MediaTrack {
  /** string (or integer): assigned by the server, `v1`, `a1`. */
  readonly track_id?: unknown;
  /** string: video | audio | text | metadata | application. */
  readonly content?: unknown;
  /** string. */
  readonly codec?: unknown;
  /** integer, pixels (video). */
  readonly width?: unknown;
  /** integer, pixels (video). */
  readonly height?: unknown;
  /** string. */
  readonly language?: unknown;
  /** integer, kbit/s. */
  readonly bitrate?: unknown;
  /** number: average over the last 200 frames (newer). */
  readonly avg_fps?: unknown;
  /** number. */
  readonly fps?: unknown;
  /** integer, frames: average over the last 1000-2000 frames (newer). */
  readonly avg_gop?: unknown;
  /** integer, frames. */
  readonly last_gop?: unknown;
}

/** One configured push of a stream (flat shape); only its `stats` is read. */
export interface FlatPush {
  /** PushCounters. */
  readonly stats?: unknown;
}

/** Counters of one push (`push_stats`): `pushes[i].stats` or `stats.push[i]`. */
export interface PushCounters {
  /** integer, bytes sent. */
  readonly bytes?: unknown;
  /** integer. */
  readonly retries?: unknown;
}

/** GET /config/stats (`server_stats`). */
export interface ServerStats {
  /** string, `23.04`. */
  readonly server_version?: unknown;
  /** integer. */
  readonly build?: unknown;
  /** string. */
  readonly hostname?: unknown;
  /** string: undefined | online | usb | network | offline. */
  readonly license_type?: unknown;
  /** string: no_config | broken_config | license_failure | no_license | starting | running. */
  readonly streamer_status?: unknown;
  /** integer, Unix seconds. */
  readonly started_at?: unknown;
  /** integer, percent. */
  readonly cpu_usage?: unknown;
  /** integer, percent. */
  readonly memory_usage?: unknown;
  /** integer, percent. */
  readonly scheduler_load?: unknown;
  /** integer, percent. */
  readonly bandwidth_usage?: unknown;
  /** integer. */
  readonly total_clients?: unknown;
  /** integer. */
  readonly total_streams?: unknown;
  /** integer. */
  readonly online_streams?: unknown;
  /** integer. */
  readonly opened_files?: unknown;
  /** integer, kbit/s. */
  readonly input_kbit?: unknown;
  /** integer, kbit/s. */
  readonly output_kbit?: unknown;
  /** ServerEvents. */
  readonly events?: unknown;
  /** Partition[]. */
  readonly partitions?: unknown;
  /** TranscoderDevice[]; absent on a server without transcoding devices. */
  readonly transcoder_devices?: unknown;
  // Never read: license_txt (secret-like), id (runtime uuid), text_alerts, config_error.
}

export interface ServerEvents {
  /** integer, counter. */
  readonly resent_events?: unknown;
  /** integer, counter. */
  readonly dropped_events?: unknown;
}

export interface Partition {
  /** string: mount path. */
  readonly path?: unknown;
  /** string: block device, `sda1`. */
  readonly device?: unknown;
  /** integer, megabytes (MiB). */
  readonly total_mb?: unknown;
  /** integer, percent. */
  readonly usage?: unknown;
  /** integer, percent. */
  readonly io_util?: unknown;
}

/** `transcoder_devices[]` (`transcoder_device_stats`). */
export interface TranscoderDevice {
  /** integer in GET responses, or `auto`. */
  readonly id?: unknown;
  /** string: cpu | nvenc | qsv | coder | ... */
  readonly type?: unknown;
  /** string. */
  readonly name?: unknown;
  /** string: the device's hardware uuid (stable across restarts). */
  readonly uuid?: unknown;
  /** integer, degrees Celsius. */
  readonly gpu_temp?: unknown;
  /** integer, percent. */
  readonly gpu_enc?: unknown;
  /** integer, percent. */
  readonly gpu_dec?: unknown;
  /** integer, percent. */
  readonly gpu_sm?: unknown;
  /** integer, unit undocumented: below 1048576 taken as MiB, else bytes. */
  readonly memTotal?: unknown;
  readonly memFree?: unknown;
  readonly memUsed?: unknown;
}
