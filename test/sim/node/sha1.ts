/**
 * The synchronous SHA-1 the simulation's nodes cache scripts under (`SimNode`'s `sha1` option):
 * Node's own, since the simulation runs on Node only.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Hex SHA-1 of `source`, as Redis names a cached script. */
export const sha1 = (source: string): string => createHash("sha1").update(source).digest("hex");
