/**
 * The audio every fake TTS server speaks: `msPerChar` ms per character, each sample holding the
 * character's code, so a test can read the spoken text back from the PCM it received.
 */

/** Samples per character at `rate` (rounded to whole samples). */
export function samplesPerChar(rate: number, msPerChar = 10): number {
  return Math.round((rate * msPerChar) / 1000);
}

/** The fake's audio for `text`: `samplesPerChar` samples per character, each the character code. */
export function pcmForText(text: string, rate: number, msPerChar = 10): Buffer {
  const per = samplesPerChar(rate, msPerChar);
  const pcm = Buffer.alloc(text.length * per * 2);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    for (let j = 0; j < per; j++) pcm.writeInt16LE(code > 0x7fff ? 0x3f : code, (i * per + j) * 2);
  }
  return pcm;
}

/** Read the fake's audio back as text (one character per `samplesPerChar` samples). */
export function textFromPcm(pcm: Uint8Array, rate: number, msPerChar = 10): string {
  const per = samplesPerChar(rate, msPerChar);
  const view = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  let text = "";
  for (let offset = 0; offset + per * 2 <= view.length; offset += per * 2) text += String.fromCharCode(view.readInt16LE(offset));
  return text;
}
