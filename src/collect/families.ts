/**
 * Every family the collectors fill, as their modules declare them (each beside its mapping), in
 * exposition order: server, streams, sessions, DVR storages, cluster view, Catena operations.
 * The whole catalogue, with the exporter's own families, is src/serve/catalogue.ts.
 */
import { CLUSTER_FAMILIES } from './cluster.js';
import { DVR_FAMILIES } from './dvrs.js';
import { OPERATIONS_FAMILIES } from './operations-families.js';
import { SERVER_FAMILIES } from './server.js';
import { SESSION_FAMILIES } from './sessions.js';
import { STREAM_FAMILIES } from './streams-map.js';
import { familyList, type FamilyDef } from '../families/define.js';

export const UPSTREAM_FAMILIES: readonly FamilyDef[] = Object.freeze(
  [SERVER_FAMILIES, STREAM_FAMILIES, SESSION_FAMILIES, DVR_FAMILIES, CLUSTER_FAMILIES, OPERATIONS_FAMILIES].flatMap((t) =>
    familyList<string>(t),
  ),
);

const BY_NAME: ReadonlyMap<string, FamilyDef> = new Map(UPSTREAM_FAMILIES.map((f) => [f.name, f]));

/** The upstream family of that name, if there is one. */
export function upstreamFamily(name: string): FamilyDef | undefined {
  return BY_NAME.get(name);
}
