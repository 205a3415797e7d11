/**
 * A transfer the agent asked for (`transfer_call`): it happens once the reply announcing it has
 * been heard, as `end_call`'s hang-up does (docs/telephony.md "Transfer"). The link carries it out
 * — a carrier's REST API, or a browser client told by `transfer.requested` — and the session then
 * ends (close 1000 `call transferred`). A transfer the carrier refused leaves the call with the
 * agent, who says so.
 */
import type { EventBody } from "../events.js";
import type { Logger } from "../log.js";
import type { TransferMode, TransferTarget } from "../manifest/index.js";
import type { ClientLink } from "../transport/client-connection.js";
import type { TransferAnswer } from "./builtins/index.js";

/** Spoken when the carrier refused the transfer: the caller is still on the line with the agent. */
export const TRANSFER_FAILED_LINE = "I'm sorry, I couldn't put you through just now. Is there anything else I can do for you?";

export interface CallTransferHooks {
  readonly log: Logger;
  /** The session is live: a transfer settling after the end does nothing. */
  live(): boolean;
  /** The session's link: a carrier's hands the caller over itself; a client's is sent `transfer.requested`. */
  readonly link: Pick<ClientLink, "transferModes" | "transferRefusal" | "transfer">;
  /** The session handing over: a warm transfer nobody answers comes back to it. */
  readonly sessionId: string;
  /** Emit an event to the client (through the session: observers and metrics see it). */
  emit(event: EventBody): void;
  /** Speak a line as the agent's. */
  say(text: string): void;
  /** Close the link normally (1000) with `reason`, and end the session. */
  close(reason: string): void;
}

type State =
  | { readonly kind: "idle" }
  | { readonly kind: "asked"; readonly target: TransferTarget }
  | { readonly kind: "transferring"; readonly target: TransferTarget }
  | { readonly kind: "done" };

/** A client that takes events can act on either kind: it is told the summary too. */
const CLIENT_MODES: readonly TransferMode[] = ["cold", "warm"];

const MODE_WORDS: Readonly<Record<TransferMode, string>> = { cold: "a transfer", warm: "a warm transfer (a summary first)" };

export class CallTransfer {
  readonly #hooks: CallTransferHooks;
  #state: State = { kind: "idle" };

  constructor(hooks: CallTransferHooks) {
    this.#hooks = hooks;
  }

  /** The model asked for a transfer: it is held until the current reply has been heard. */
  request(target: TransferTarget): TransferAnswer {
    const modes = this.#hooks.link.transferModes ?? CLIENT_MODES;
    if (modes.length === 0) return { text: "Transferring calls is not supported on this connection.", isError: true };
    if (!modes.includes(target.mode)) {
      return { text: `${MODE_WORDS[target.mode]} is not possible on this call, so "${target.name}" cannot be reached from it. Tell the caller and offer another way to help.`, isError: true };
    }
    const refusal = this.#hooks.link.transferRefusal?.(target);
    if (refusal !== undefined) return { text: `${refusal} Tell the caller and offer another way to help.`, isError: true };
    if (this.#state.kind === "transferring" || this.#state.kind === "done") return { text: "A transfer is already under way.", isError: true };
    this.#state = { kind: "asked", target };
    return { text: `The transfer to "${target.name}" starts once this reply has been heard. Tell the caller, in one short sentence, that you are putting them through now.` };
  }

  /** A transfer was asked for and has not failed: the call is on its way to a person. */
  get underway(): boolean {
    return this.#state.kind !== "idle";
  }

  /** A reply has settled (a spoken one once heard): the transfer asked for starts now. */
  replySettled(): void {
    const state = this.#state;
    if (state.kind !== "asked") return;
    const { target } = state;
    this.#state = { kind: "transferring", target };
    const { log } = this.#hooks;
    log.info({ destination: target.name, mode: target.mode }, "transferring the call");
    this.#handOver(target).then(
      () => {
        this.#state = { kind: "done" };
        if (this.#hooks.live()) this.#hooks.close("call transferred");
      },
      (err: unknown) => {
        this.#state = { kind: "idle" };
        log.warn({ err, destination: target.name }, "call transfer failed");
        if (this.#hooks.live()) this.#hooks.say(TRANSFER_FAILED_LINE);
      },
    );
  }

  #handOver(target: TransferTarget): Promise<void> {
    const { link } = this.#hooks;
    if (link.transferModes !== undefined && link.transfer !== undefined) return link.transfer(target, this.#hooks.sessionId);
    const { address } = target;
    this.#hooks.emit({
      type: "transfer.requested",
      destination: target.name,
      ...(address.kind === "number" ? { number: address.number } : { sip: address.uri }),
      mode: target.mode,
      ...(target.summary === undefined ? {} : { summary: target.summary }),
    });
    return Promise.resolve();
  }
}
