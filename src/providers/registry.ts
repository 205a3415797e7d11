/**
 * The STT, TTS and s2s registries' one rule: a descriptor's `kind` picks its vendor's adapter from a
 * table (one entry per vendor, in the order the error lists them); a kind the table lacks is a
 * fatal error on that port naming the kinds this gateway has.
 */
import { GatewayError, type ErrorCode } from "../errors.js";

/** An adapter factory per descriptor kind. */
export type AdapterTable<D extends { readonly kind: string }, A extends readonly unknown[], P> = Readonly<Record<string, (descriptor: D, ...args: A) => P>>;

/** The adapter `table` makes for `descriptor` (`args` passed on); `port` and `what` name the port in the error. */
export function adapterFor<D extends { readonly kind: string }, A extends readonly unknown[], P>(port: ErrorCode, what: string, table: AdapterTable<D, A, P>, descriptor: D, ...args: A): P {
  const make = Object.hasOwn(table, descriptor.kind) ? table[descriptor.kind] : undefined;
  if (make === undefined) throw new GatewayError(port, `no ${what} provider of kind "${descriptor.kind}" is available in this gateway (${Object.keys(table).join(", ")}).`, { fatal: true });
  return make(descriptor, ...args);
}
