/** QR codes encode the short address with the QR marker, so their clicks are recorded as via=qr. */
import { expect, test } from "bun:test";
import { inlineQr, qrAddress, qrDownload, qrSvg } from "../../control/dashboard/qr.ts";
import { hasQrMarker } from "../../redirector/request-facts.ts";

test("the address a QR code encodes carries the marker the redirector looks for", () => {
  expect(qrAddress("https://s.example/spring")).toBe("https://s.example/spring?qr=1");
  expect(qrAddress("https://s.example/spring?a=b")).toBe("https://s.example/spring?a=b&qr=1");
  for (const url of ["https://s.example/spring", "https://s.example/spring?a=b"]) expect(hasQrMarker(qrAddress(url))).toBe(true);
  expect(hasQrMarker("https://s.example/spring")).toBe(false);
});

test("the page's QR code and the download encode the marked address, labelled with the short address", async () => {
  const marked = await qrSvg("https://s.example/spring?qr=1");
  expect(marked).not.toBe(await qrSvg("https://s.example/spring"));
  expect(await (await qrDownload("https://s.example/spring", "spring")).text()).toBe(marked);
  const inline = await inlineQr("https://s.example/spring");
  expect(inline).toContain(`aria-label="QR code for https://s.example/spring"`);
  expect(inline.replace(/^<svg role="img" aria-label="[^"]*" /, "<svg ")).toBe(marked.trim());
});
