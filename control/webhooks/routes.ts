/** REST routes for event webhook endpoints (docs/webhooks.md): thin handlers over webhooks/service.ts. */
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import * as webhooks from "./service.ts";

const Events = t.Array(t.Union(["link.created", "link.updated", "link.deleted", "link.clicked"].map((e) => t.Literal(e))));
const EndpointInput = t.Object({ url: t.String({ maxLength: 2048 }), events: Events, active: t.Optional(t.Boolean()) });
const EndpointChange = t.Partial(EndpointInput);
const Endpoint = t.Object({ id: t.String(), url: t.String(), events: Events, active: t.Boolean(), createdAt: t.String(), updatedAt: t.String() });
const Delivery = t.Object({
  id: t.String({ description: "the webhook-id header, the same on every attempt" }), eventType: t.String(),
  status: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed")]), attempts: t.Integer(), createdAt: t.String(),
  nextAttemptAt: t.Nullable(t.String()), lastAttemptAt: t.Nullable(t.String()), lastError: t.Nullable(t.String()),
  deliveredAt: t.Nullable(t.String()), payload: t.Unknown(),
});
const DeliveriesQuery = t.Object({
  limit: t.Optional(t.String({ description: "1-200, default 50" })),
  cursor: t.Optional(t.String({ description: "nextCursor of the previous page" })),
});

export const webhookRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "webhook-routes" })
    .post("/webhooks", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "webhooks:manage");
      set.status = 201;
      return webhooks.createEndpoint(deps, caller, await api.body(request));
    }, doc("Create a webhook endpoint (201); the answer's secret is shown this once", { body: EndpointInput, ok: [201, t.Composite([Endpoint, t.Object({ secret: t.String() })])] }))
    .get("/webhooks", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "webhooks:manage");
      return webhooks.listEndpoints(deps, caller);
    }, doc("List webhook endpoints", { ok: [200, t.Object({ endpoints: t.Array(Endpoint) })] }))
    .get("/webhooks/:id", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "webhooks:manage");
      return webhooks.getEndpoint(deps, caller, params.id);
    }, doc("Get a webhook endpoint", { ok: [200, Endpoint] }))
    .patch("/webhooks/:id", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "webhooks:manage");
      return webhooks.updateEndpoint(deps, caller, params.id, await api.body(request));
    }, doc("Change a webhook endpoint's url, events or active", { body: EndpointChange, ok: [200, Endpoint] }))
    .delete("/webhooks/:id", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "webhooks:manage");
      await webhooks.deleteEndpoint(deps, caller, params.id);
      return new Response(null, { status: 204, headers: set.headers as Record<string, string> });
    }, doc("Delete a webhook endpoint and its delivery log", { ok: [204, t.Null()] }))
    .get("/webhooks/:id/deliveries", async ({ request, set, params, query }) => {
      const caller = await api.guard(request, set.headers, "webhooks:manage");
      return webhooks.listDeliveries(deps, caller, params.id, query as webhooks.DeliveriesQuery);
    }, doc("An endpoint's delivery log, newest first", { query: DeliveriesQuery, ok: [200, t.Object({ deliveries: t.Array(Delivery), nextCursor: t.Nullable(t.String()) })], badRequest: "invalid_parameter" }))
    .post("/webhooks/:id/deliveries/:deliveryId/retry", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "webhooks:manage");
      set.status = 202;
      return webhooks.retryDelivery(deps, caller, params.id, params.deliveryId);
    }, doc("Send a delivery again (202): due now, retried with backoff as a new one", { ok: [202, Delivery] }))
    .all("/webhooks", () => methodNotAllowed("GET, POST"), { parse: "none", detail: { hide: true } })
    .all("/webhooks/:id", () => methodNotAllowed("GET, PATCH, DELETE"), { parse: "none", detail: { hide: true } })
    .all("/webhooks/:id/deliveries", () => methodNotAllowed("GET"), { parse: "none", detail: { hide: true } })
    .all("/webhooks/:id/deliveries/:deliveryId/retry", () => methodNotAllowed("POST"), { parse: "none", detail: { hide: true } });
