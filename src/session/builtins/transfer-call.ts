/**
 * The `transfer_call` builtin: hand the caller to a person at one of the agent's allow-listed
 * destinations (`transfer`, docs/config.md; docs/telephony.md "Transfer"). The model names a
 * destination; it never gives a number, so it cannot dial one the operator did not list. The
 * transfer itself happens after the reply announcing it has been heard (the session's
 * `CallTransfer`); this tool only asks for it.
 */
import type { JSONSchema7 } from "json-schema";
import { compileJsonSchema, tool, transferTarget, type AnyToolDef, type TransferConfig, type TransferTarget } from "../../manifest/index.js";

/** What the host answers a transfer request with: the text the model reads. */
export interface TransferAnswer {
  readonly text: string;
  readonly isError?: boolean;
}

/** A summary longer than this is cut: a person hears it read out before the caller is put through. */
export const MAX_SUMMARY_CHARS = 1000;

function destinationLine(d: TransferConfig["destinations"][number]): string {
  const how = d.mode === "warm" ? " (warm: give a summary)" : "";
  return `"${d.name}"${d.description === undefined ? "" : `: ${d.description}`}${how}`;
}

export function transferCallTool(config: TransferConfig, request: ((target: TransferTarget) => TransferAnswer) | undefined): AnyToolDef {
  const names = config.destinations.map((d) => d.name);
  const warm = config.destinations.some((d) => d.mode === "warm");
  const summary: JSONSchema7 = {
    maxLength: MAX_SUMMARY_CHARS,
    description: "For a warm destination: two or three sentences for the person who takes the call — who the caller is, what they need, what was already done. They hear it before the caller is put through.",
    type: "string",
  };
  const description = `Where to transfer the caller: one of ${names.map((n) => `"${n}"`).join(", ")}.`;
  const literals = names.map((name): JSONSchema7 => ({ const: name, type: "string" }));
  return tool({
    description:
      `Transfer the caller to a person. Destinations: ${config.destinations.map(destinationLine).join("; ")}. ` +
      "Tell the caller you are transferring them in the same reply; the transfer starts once that reply has been heard.",
    parameters: compileJsonSchema<{ destination: string; summary?: string }>({
      type: "object",
      required: ["destination"],
      properties: {
        // One destination is its literal, more are a union of them.
        destination: { description, ...(literals.length === 1 ? literals[0] : { anyOf: literals }) },
        ...(warm ? { summary } : {}),
      },
    }),
    effect: "write",
    onError: "The transfer did not go through. Tell the caller and offer another way to help.",
    execute: ({ destination, summary: written }) => {
      const given = written?.trim();
      const entry = config.destinations.find((d) => d.name === destination);
      if (entry === undefined) return { text: `"${destination}" is not a destination I may transfer to. I may transfer to: ${names.join(", ")}.`, isError: true };
      if (request === undefined) return { text: "Transferring calls is not supported on this connection.", isError: true };
      if (entry.mode === "warm" && (given === undefined || given === "")) {
        return { text: `A transfer to "${destination}" needs a summary for the person who takes the call: call transfer_call again with one.`, isError: true };
      }
      const answer = request(transferTarget(config, entry, entry.mode === "warm" ? given : undefined));
      return answer.isError === true ? { text: answer.text, isError: true } : { text: answer.text, details: { destination, mode: entry.mode ?? "cold" } };
    },
  });
}
