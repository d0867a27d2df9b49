/**
 * Invalid `createLocks` options, one row per mistake: what to pass (built from the real nodes) and
 * the option the `ConfigurationError` must name. Used by `bad-inputs.test.ts`.
 *
 * @module
 */

import { MAX_LEASE } from "../../../src/lock/options";

/** The dev cluster's `{ url, token }` list. */
export type Nodes = readonly { url: string; token: string }[];

const long = "x".repeat(300);
const sameObject = { url: "http://127.0.0.1:1", token: "t" };
/** Each row: a name, the option the error must name, and the options to pass. */
export const OPTION_CASES: { name: string; option: string; make: (nodes: Nodes) => unknown }[] = [
  { name: "options is null", option: "options", make: () => null },
  { name: "options is a string", option: "options", make: () => "nodes" },
  { name: "unknown option", option: "leaseMs", make: (n) => ({ nodes: n, leaseMs: 5 }) },
  { name: "nodes missing", option: "nodes", make: () => ({}) },
  { name: "nodes empty", option: "nodes", make: () => ({ nodes: [] }) },
  { name: "nodes not an array", option: "nodes", make: (n) => ({ nodes: n[0] }) },
  { name: "nodes entry null", option: "nodes[1]", make: (n) => ({ nodes: [n[0], null] }) },
  { name: "nodes entry a number", option: "nodes[0]", make: () => ({ nodes: [42] }) },
  { name: "nodes entry a string URL", option: "nodes[0]", make: (n) => ({ nodes: [n[0]?.url] }) },
  {
    name: "nodes entry url not a string",
    option: "nodes[0]",
    make: () => ({ nodes: [{ url: 1, token: "t" }] }),
  },
  {
    name: "nodes entry token missing",
    option: "nodes[0]",
    make: (n) => ({ nodes: [{ url: n[0]?.url }] }),
  },
  {
    name: "nodes entry bad URL",
    option: "nodes[2].url",
    make: (n) => ({ nodes: [n[0], n[1], { url: "not a url", token: "t" }] }),
  },
  {
    name: "nodes entry ftp URL",
    option: "nodes[0].url",
    make: () => ({ nodes: [{ url: "ftp://example.com", token: "t" }] }),
  },
  {
    name: "nodes entry empty token",
    option: "nodes[1].token",
    make: (n) => ({ nodes: [n[0], { url: n[1]?.url, token: " " }] }),
  },
  { name: "duplicate URL", option: "nodes[2]", make: (n) => ({ nodes: [n[0], n[1], n[0]] }) },
  {
    name: "duplicate URL, other case and trailing slash",
    option: "nodes[1]",
    make: (n) => ({ nodes: [n[0], { url: `${n[0]?.url.toUpperCase()}/`, token: "t" }] }),
  },
  {
    name: "the same node object twice",
    option: "nodes[1]",
    make: () => ({ nodes: [sameObject, sameObject] }),
  },
  { name: "lease 0", option: "lease", make: (n) => ({ nodes: n, lease: 0 }) },
  { name: "lease negative", option: "lease", make: (n) => ({ nodes: n, lease: -1 }) },
  { name: "lease fractional", option: "lease", make: (n) => ({ nodes: n, lease: 1.5 }) },
  { name: "lease a string", option: "lease", make: (n) => ({ nodes: n, lease: "1000" }) },
  { name: "lease NaN", option: "lease", make: (n) => ({ nodes: n, lease: Number.NaN }) },
  {
    name: "lease beyond the timer range",
    option: "lease",
    make: (n) => ({ nodes: n, lease: MAX_LEASE + 1 }),
  },
  {
    name: "lease too short for minValidity",
    option: "lease",
    make: (n) => ({ nodes: n, lease: 5 }),
  },
  {
    name: "driftFactor negative",
    option: "driftFactor",
    make: (n) => ({ nodes: n, driftFactor: -0.1 }),
  },
  { name: "driftFactor 0.5", option: "driftFactor", make: (n) => ({ nodes: n, driftFactor: 0.5 }) },
  {
    name: "driftFactor a string",
    option: "driftFactor",
    make: (n) => ({ nodes: n, driftFactor: "0.01" }),
  },
  {
    name: "driftFactor NaN",
    option: "driftFactor",
    make: (n) => ({ nodes: n, driftFactor: Number.NaN }),
  },
  { name: "prefix empty", option: "prefix", make: (n) => ({ nodes: n, prefix: "" }) },
  { name: "prefix a number", option: "prefix", make: (n) => ({ nodes: n, prefix: 42 }) },
  { name: "prefix too long", option: "prefix", make: (n) => ({ nodes: n, prefix: long }) },
  {
    name: "minValidity negative",
    option: "minValidity",
    make: (n) => ({ nodes: n, minValidity: -1 }),
  },
  {
    name: "minValidity fractional",
    option: "minValidity",
    make: (n) => ({ nodes: n, minValidity: 1.5 }),
  },
  {
    name: "requestTimeout 0",
    option: "requestTimeout",
    make: (n) => ({ nodes: n, requestTimeout: 0 }),
  },
  {
    name: "requestTimeout a string",
    option: "requestTimeout",
    make: (n) => ({ nodes: n, requestTimeout: "100" }),
  },
  { name: "wait negative", option: "wait", make: (n) => ({ nodes: n, wait: -1 }) },
  {
    name: "wait Infinity",
    option: "wait",
    make: (n) => ({ nodes: n, wait: Number.POSITIVE_INFINITY }),
  },
  { name: "retryDelay 0", option: "retryDelay", make: (n) => ({ nodes: n, retryDelay: 0 }) },
  {
    name: "retryDelayMax below retryDelay",
    option: "retryDelayMax",
    make: (n) => ({ nodes: n, retryDelay: 100, retryDelayMax: 50 }),
  },
  {
    name: "onEvent not a function",
    option: "onEvent",
    make: (n) => ({ nodes: n, onEvent: "log" }),
  },
  { name: "fencing a string", option: "fencing", make: (n) => ({ nodes: n, fencing: "yes" }) },
];
