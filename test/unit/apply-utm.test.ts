/** applyUtm: UTM fields go into the query; everything else in the destination stays exactly as written. */
import { describe, expect, test } from "bun:test";
import { applyUtm } from "../../shared/link.ts";

const none = { utmSource: null, utmMedium: null, utmCampaign: null };
const all = { utmSource: "news", utmMedium: "email", utmCampaign: "spring sale" };

describe("applyUtm", () => {
  test.each([
    ["no UTM fields: the destination as given", "https://e.com/p?x=1", none, "https://e.com/p?x=1"],
    ["an address stored raw (before input was encoded) comes out header-safe", "https://e.com/a b\tc", none, "https://e.com/a%20bc"],
    ["no query yet", "https://e.com/p", all, "https://e.com/p?utm_source=news&utm_medium=email&utm_campaign=spring+sale"],
    ["after an existing query", "https://e.com/p?id=7", { ...none, utmSource: "social" }, "https://e.com/p?id=7&utm_source=social"],
    ["before the fragment", "https://e.com/p?id=7#top", { ...none, utmSource: "social" }, "https://e.com/p?id=7&utm_source=social#top"],
    [
      "other parameters keep their exact spelling (bare names, %20, ;, /)",
      "https://e.com/p?flag&q=a%20b&s=a;b&path=/x/y&plus=a+b",
      { ...none, utmSource: "s" },
      "https://e.com/p?flag&q=a%20b&s=a;b&path=/x/y&plus=a+b&utm_source=s",
    ],
    ["an existing UTM parameter is replaced where it stands", "https://e.com/?utm_source=old&a=1", { ...none, utmSource: "new" }, "https://e.com/?utm_source=new&a=1"],
    ["a repeated one is replaced once", "https://e.com/?utm_source=a&utm_source=b&z=1", { ...none, utmSource: "c" }, "https://e.com/?utm_source=c&z=1"],
    ["a percent-encoded name is recognised", "https://e.com/?utm%5Fsource=old", { ...none, utmSource: "new" }, "https://e.com/?utm_source=new"],
    ["other cases are other parameters", "https://e.com/?UTM_SOURCE=keep", { ...none, utmSource: "new" }, "https://e.com/?UTM_SOURCE=keep&utm_source=new"],
    ["UTM fields not set leave those parameters alone", "https://e.com/?utm_medium=cpc", { ...none, utmSource: "s" }, "https://e.com/?utm_medium=cpc&utm_source=s"],
    ["values are encoded", "https://e.com/", { ...none, utmCampaign: "a&b=c d/é" }, "https://e.com/?utm_campaign=a%26b%3Dc+d%2F%C3%A9"],
    ["a malformed escape elsewhere is kept as written", "https://e.com/?bad=%zz", { ...none, utmSource: "s" }, "https://e.com/?bad=%zz&utm_source=s"],
    ["an empty query", "https://e.com/p?", { ...none, utmSource: "s" }, "https://e.com/p?utm_source=s"],
  ])("%s", (_name, url, link, expected) => {
    expect(applyUtm(url, link)).toBe(expected);
  });
});
