// The OpenAI Realtime adapter's audio bytes per output item: the item speaking now in fields, the earlier ones in a map, counted alike.
import { describe, expect, it } from "vitest";
import { ItemAudio } from "../../../src/s2s/providers/openai-realtime/item-audio.js";

describe("ItemAudio", () => {
  it("counts each item's bytes, the one speaking now and the earlier ones", () => {
    const audio = new ItemAudio();
    audio.add("item_a", 160);
    audio.add("item_a", 160);
    audio.add("item_b", 80);
    expect(audio.get("item_a")).toBe(320);
    expect(audio.get("item_b")).toBe(80);
    expect(audio.get("item_c")).toBeUndefined();
  });

  it("goes on counting an earlier item when its audio comes again", () => {
    const audio = new ItemAudio();
    audio.add("item_a", 100);
    audio.add("item_b", 10);
    audio.add("item_a", 5);
    audio.add("item_b", 1);
    expect(audio.get("item_a")).toBe(105);
    expect(audio.get("item_b")).toBe(11);
  });

  it("knows an item whose audio was empty", () => {
    const audio = new ItemAudio();
    audio.add("item_a", 0);
    expect(audio.get("item_a")).toBe(0);
  });

  it("forgets a deleted item, whether it is speaking now or earlier, and everything on clear", () => {
    const audio = new ItemAudio();
    audio.add("item_a", 100);
    audio.add("item_b", 10);
    audio.delete("item_b");
    expect(audio.get("item_b")).toBeUndefined();
    expect(audio.get("item_a")).toBe(100);
    audio.delete("item_a");
    expect(audio.get("item_a")).toBeUndefined();
    audio.add("item_c", 7);
    audio.add("item_d", 3);
    audio.clear();
    expect(audio.get("item_c")).toBeUndefined();
    expect(audio.get("item_d")).toBeUndefined();
    audio.add("item_c", 2);
    expect(audio.get("item_c")).toBe(2);
  });
});
