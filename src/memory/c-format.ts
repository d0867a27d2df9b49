/**
 * C's `printf` conversions of a double (`%e`, `%f`, `%g`, upper case too) as glibc writes them, for
 * the Lua of memory nodes: Redis's Lua 5.1 writes every number with `%.14g` and formats with C's
 * `sprintf`. The digits come from the double's exact decimal value rounded half to even, as glibc
 * rounds: `%.14g` of 123456789012345 is `1.2345678901234e+14` (JavaScript's `toExponential` rounds
 * that tie up).
 *
 * @module
 */

/** A positive value `0.DIGITS × 10^point`, DIGITS without leading or trailing zeros ("" is 0). */
interface Decimal {
  readonly digits: string;
  readonly point: number;
}

/** The exact decimal value of finite `x` ≥ 0. */
function exact(x: number): Decimal {
  if (x === 0) return { digits: "", point: 0 };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  let exp2 = -1074;
  if (biased !== 0) {
    mantissa |= 1n << 52n;
    exp2 = biased - 1075;
  }
  const scaled = exp2 >= 0 ? mantissa << BigInt(exp2) : mantissa * 5n ** BigInt(-exp2);
  const text = scaled.toString();
  return { digits: text.replace(/0+$/, ""), point: text.length - Math.max(0, -exp2) };
}

/** `d` rounded half to even to its first `keep` digits. */
function round(d: Decimal, keep: number): Decimal {
  if (keep >= d.digits.length) return d;
  if (keep < 0) return { digits: "", point: d.point };
  const head = d.digits.slice(0, keep);
  const next = d.digits[keep] as string;
  const tie = next === "5" && d.digits.length === keep + 1;
  const odd = head !== "" && Number(head[head.length - 1]) % 2 === 1;
  if (next < "5" || (tie && !odd)) return { digits: head.replace(/0+$/, ""), point: d.point };
  if (head === "") return { digits: "1", point: d.point + 1 };
  const up = (BigInt(head) + 1n).toString();
  if (up.length > head.length) return { digits: "1", point: d.point + 1 };
  return { digits: up.replace(/0+$/, ""), point: d.point };
}

const digitAt = (d: Decimal, i: number): string => d.digits[i] ?? "0";

function exponential(d: Decimal, precision: number, upper: boolean): string {
  const r = round(d, precision + 1);
  const exp = r.digits === "" ? 0 : r.point - 1;
  let mantissa = digitAt(r, 0);
  if (precision > 0) mantissa += `.${r.digits.slice(1).padEnd(precision, "0")}`;
  const e = `${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  return `${mantissa}${upper ? "E" : "e"}${e}`;
}

function fixed(d: Decimal, precision: number): string {
  const r = round(d, d.point + precision);
  // The value times 10^precision, as an integer's digits.
  const total = r.point + precision;
  const scaled = total > 0 ? r.digits.padEnd(total, "0") : "0";
  const padded = scaled.padStart(precision + 1, "0");
  if (precision === 0) return padded;
  return `${padded.slice(0, -precision)}.${padded.slice(-precision)}`;
}

function general(d: Decimal, precision: number, alternate: boolean, upper: boolean): string {
  const p = precision === 0 ? 1 : precision;
  const r = round(d, p);
  const exp = r.digits === "" ? 0 : r.point - 1;
  const text = p > exp && exp >= -4 ? fixed(d, p - 1 - exp) : exponential(d, p - 1, upper);
  if (alternate) return text;
  const [mantissa = "", e = ""] = text.split(/(?=[eE])/);
  return (mantissa.includes(".") ? mantissa.replace(/\.?0+$/, "") : mantissa) + e;
}

/** C's `#` flag: the decimal point always written. */
function withPoint(text: string): string {
  if (text.includes(".")) return text;
  const [mantissa = "", e = ""] = text.split(/(?=[eE])/);
  return `${mantissa}.${e}`;
}

/**
 * One `printf` conversion `conv` (e, E, f, F, g, G) of `x` with C's flags, width and precision
 * (default 6).
 *
 * @example
 * cFormat(123456789012345, "g", "", "", "14"); // "1.2345678901234e+14"
 */
export function cFormat(
  x: number,
  conv: string,
  flags: string,
  width: string,
  precision: string | undefined,
): string {
  const upper = conv === "E" || conv === "G" || conv === "F";
  const negative = x < 0 || Object.is(x, -0);
  const p = precision === undefined ? 6 : Number(precision || "0");
  let body: string;
  if (Number.isNaN(x)) body = "nan";
  else if (!Number.isFinite(x)) body = "inf";
  else {
    const d = exact(Math.abs(x));
    const lower = conv.toLowerCase();
    if (lower === "e") body = exponential(d, p, upper);
    else if (lower === "f") body = fixed(d, p);
    else body = general(d, p, flags.includes("#"), upper);
    if (flags.includes("#")) body = withPoint(body);
  }
  if (upper) body = body.toUpperCase();
  // x86's NaN from 0/0 carries the sign bit, which glibc writes.
  const sign =
    negative || Number.isNaN(x) ? "-" : flags.includes("+") ? "+" : flags.includes(" ") ? " " : "";
  const size = Number(width || "0");
  if (flags.includes("-")) return (sign + body).padEnd(size, " ");
  if (flags.includes("0") && Number.isFinite(x))
    return sign + body.padStart(size - sign.length, "0");
  return (sign + body).padStart(size, " ");
}
