/** The place of a click (country, region, city) from each GeoIP database shape GEOIP_DB may point at. */
import { describe, expect, test } from "bun:test";
import { NOWHERE, openGeoLookups, placeOf } from "../../shared/facts/geo.ts";

describe("placeOf (a record of each shape)", () => {
  test("MaxMind City: the first subdivision as an ISO 3166-2 code, the English city name", () => {
    const rec = { country: { iso_code: "DE" }, subdivisions: [{ iso_code: "BY" }, { iso_code: "09" }], city: { names: { en: "Munich", de: "München" } } };
    expect(placeOf(rec)).toEqual({ country: "DE", region: "DE-BY", city: "Munich" });
  });

  test("MaxMind Country and the DB-IP country lite database: no region or city", () => {
    expect(placeOf({ country: { iso_code: "US" } })).toEqual({ country: "US", region: null, city: null });
    expect(placeOf({ country_code: "FR" })).toEqual({ country: "FR", region: null, city: null });
    expect(placeOf({ registered_country: { iso_code: "JP" }, subdivisions: [] })).toEqual({ country: "JP", region: null, city: null });
  });

  test("DB-IP city lite: its region name and city as they are", () => {
    expect(placeOf({ country_code: "DE", state1: "Bavaria", city: "Munich" })).toEqual({ country: "DE", region: "Bavaria", city: "Munich" });
  });

  test("a subdivision without a country keeps its own code; empty names are unknown", () => {
    expect(placeOf({ subdivisions: [{ iso_code: "BY" }], city: { names: { en: "" } } })).toEqual({ country: null, region: "BY", city: null });
  });
});

test("the shipped country database gives a country and null region and city", async () => {
  const geo = await openGeoLookups();
  const country = geo.country("8.8.8.8");
  expect(country).toMatch(/^[A-Z]{2}$/);
  expect(geo.place("8.8.8.8")).toEqual({ country, region: null, city: null });
  expect(geo.place("10.0.0.1")).toBe(NOWHERE);
  expect(geo.place("not an address")).toBe(NOWHERE);
});
