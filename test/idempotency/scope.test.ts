/**
 * The default scope and the key syntax, as pure functions: which parts of a request make two
 * callers different, and which bare or quoted header values are keys.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_SCOPE_HEADERS, defaultScope } from "../../src/idempotency/digest";
import { parseKey } from "../../src/idempotency/header";

const scopeOf = (headers: Record<string, string>, cookies?: readonly string[]) =>
  defaultScope((name) => headers[name], { headers: DEFAULT_SCOPE_HEADERS, cookies });

describe("defaultScope", () => {
  it("each credential header tells callers apart; absent and empty are the same", async () => {
    const anonymous = await scopeOf({});
    expect(await scopeOf({ authorization: "" })).toBe(anonymous);
    const seen = new Set([anonymous]);
    for (const name of DEFAULT_SCOPE_HEADERS) seen.add(await scopeOf({ [name]: "k" }));
    expect(seen.size).toBe(DEFAULT_SCOPE_HEADERS.length + 1);
    // The same value under two headers is two callers, not one.
    expect(await scopeOf({ "x-api-key": "k" })).not.toBe(await scopeOf({ "api-key": "k" }));
  });

  it("session cookies count (also behind __Host-/__Secure-, in any order); others do not", async () => {
    const a = await scopeOf({ cookie: "sessionid=a; _ga=1" });
    expect(await scopeOf({ cookie: "_ga=2; theme=dark; sessionid=a" })).toBe(a);
    expect(await scopeOf({ cookie: "sessionid=b; _ga=1" })).not.toBe(a);
    const host = await scopeOf({ cookie: "__Host-session=x; AWSALB=1" });
    expect(await scopeOf({ cookie: "AWSALB=2; __Host-session=x" })).toBe(host);
    expect(await scopeOf({ cookie: "__Host-session=y" })).not.toBe(host);
    // With a credential header, an unrelated cookie changes nothing.
    const auth = await scopeOf({ authorization: "Bearer a", cookie: "AWSALB=1" });
    expect(await scopeOf({ authorization: "Bearer a", cookie: "AWSALB=2" })).toBe(auth);
  });

  it("no credential nor listed cookie: the whole Cookie header, unless scopeCookies is set", async () => {
    expect(await scopeOf({ cookie: "app_sess=a" })).not.toBe(
      await scopeOf({ cookie: "app_sess=b" }),
    );
    expect(await scopeOf({ cookie: "app_sess=a" })).not.toBe(await scopeOf({}));
    // scopeCookies set: exactly those cookies count.
    expect(await scopeOf({ cookie: "app_sess=a; x=1" }, ["app_sess"])).toBe(
      await scopeOf({ cookie: "x=2; app_sess=a" }, ["app_sess"]),
    );
    expect(await scopeOf({ cookie: "app_sess=a" }, [])).toBe(await scopeOf({}, []));
  });
});

describe("parseKey", () => {
  it.each([
    ["abc", "abc"],
    ['"abc"', "abc"],
    ["  8e03978e-40d5  ", "8e03978e-40d5"],
    ["a b", "a b"],
    ['"a\\"b\\\\c"', 'a"b\\c'],
    ["k".repeat(255), "k".repeat(255)],
  ])("%j is the key %j", (value, key) => {
    expect(parseKey(value)).toEqual({ key });
  });

  it.each([
    ["", "the key is empty"],
    ['""', "the key is empty"],
    ['"abc', "not a structured-field string"],
    ['ab"c', 'a " in an unquoted key'],
    ['"a"b"', 'an unescaped "'],
    ["kéy", "printable ASCII"],
    ["k\u0001", "printable ASCII"],
    ["k".repeat(256), "longer than 255"],
  ])("%j is refused: %s", (value, why) => {
    const parsed = parseKey(value);
    expect("invalid" in parsed && parsed.invalid).toContain(why);
  });
});
