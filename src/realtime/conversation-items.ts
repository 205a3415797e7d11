/**
 * The conversation as this link shows it (docs/realtime.md "Semantics"): the order of its items
 * (each names the one before it, `previous_item_id`) and the recent ones as last sent, for
 * `conversation.item.retrieve`. A view only: the agent's history is the session's.
 */
import * as server from "./server-events.js";
import type { ConversationItem, RealtimeServerEvent } from "./server-events.js";

/** The items `conversation.item.retrieve` can find: the most recent this many (older ones are forgotten). */
export const MAX_REMEMBERED_ITEMS = 64;

export interface ConversationItemsPorts {
  readonly send: (event: RealtimeServerEvent) => void;
  readonly eventId: () => string;
}

export class ConversationItems {
  readonly #ports: ConversationItemsPorts;
  /** The last item of the conversation, for `previous_item_id`. */
  #last: string | null = null;
  /** The recent items, as last sent, by id, oldest first (at most `MAX_REMEMBERED_ITEMS`). */
  readonly #items = new Map<string, ConversationItem>();

  constructor(ports: ConversationItemsPorts) {
    this.#ports = ports;
  }

  /** The item before the next one. */
  get last(): string | null {
    return this.#last;
  }

  /** Put item `id` next in the conversation: the item before it. */
  place(id: string): string | null {
    const previous = this.#last;
    this.#last = id;
    return previous;
  }

  /** A whole item at once: `conversation.item.added` and `done`. */
  add(item: ConversationItem): void {
    const previous = this.place(item.id);
    this.#ports.send(server.itemAdded(this.#ports.eventId(), item, previous));
    this.done(item, previous);
  }

  /** `conversation.item.done`, and the item remembered. */
  done(item: ConversationItem, previous: string | null): void {
    this.remember(item);
    this.#ports.send(server.itemDone(this.#ports.eventId(), item, previous));
  }

  /** The item as last sent, for `conversation.item.retrieve` and `conversation.item.truncate`. */
  get(id: string): ConversationItem | undefined {
    return this.#items.get(id);
  }

  remember(item: ConversationItem): void {
    this.#items.delete(item.id);
    this.#items.set(item.id, item);
    if (this.#items.size > MAX_REMEMBERED_ITEMS) this.#items.delete(this.#items.keys().next().value ?? "");
  }
}
