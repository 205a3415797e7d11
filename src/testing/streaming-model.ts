import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamResult } from "@ai-sdk/provider";

/**
 * A model that only streams, for tests and benches: `doStream` is yours (record the prompt,
 * stream what the test needs, fail); `doGenerate` refuses. `provider` and `modelId` are `id`.
 */
export function streamingModel(id: string, doStream: (call: LanguageModelV4CallOptions) => PromiseLike<LanguageModelV4StreamResult>): LanguageModelV4 {
  return {
    specificationVersion: "v4",
    provider: id,
    modelId: id,
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error(`the ${id} model only streams`)),
    doStream,
  };
}
