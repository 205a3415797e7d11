// Headless Chromium for the demo page's end-to-end tests, with a fake microphone that plays a WAV.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Why Chromium tests cannot run here (said in the suite's name), or undefined. */
export const CHROMIUM_MISSING = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (sudo apt-get install chromium)`;

/** Chromium with its microphone playing `microphoneWav` (16 kHz mono PCM16; Chromium loops it), and autoplay allowed. */
export function launchChromium(microphoneWav: string): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--autoplay-policy=no-user-gesture-required",
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      `--use-file-for-fake-audio-capture=${microphoneWav}`,
    ],
  });
}
