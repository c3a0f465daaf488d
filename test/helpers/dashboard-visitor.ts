/**
 * A browser for dashboard tests without a browser: keeps cookies, posts urlencoded forms with the page's CSRF
 * token, never follows redirects, and reads what a browser would post for a page's form. Requests go to a real
 * server (`fetch`, the default) or to an app in this process (`cp.handle` of test/helpers/in-process.ts).
 */
export interface Page { status: number; headers: Headers; html: string }

type Fields = Record<string, string | string[]>;

export class Visitor {
  cookies = new Map<string, string>();
  /** The Set-Cookie headers of the last response. */
  setCookies: string[] = [];
  constructor(
    private base: string,
    private send: (request: Request) => Promise<Response> = (request) => fetch(request, { redirect: "manual" }),
  ) {}

  async request(path: string, init: RequestInit = {}): Promise<Page> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await this.send(new Request(`${this.base}${path}`, { ...init, headers }));
    this.setCookies = res.headers.getSetCookie();
    for (const c of this.setCookies) {
      const [pair] = c.split(";");
      const eq = pair.indexOf("=");
      const value = pair.slice(eq + 1);
      if (value === "" || /Max-Age=0/i.test(c)) this.cookies.delete(pair.slice(0, eq));
      else this.cookies.set(pair.slice(0, eq), value);
    }
    return { status: res.status, headers: res.headers, html: await res.text() };
  }

  get = (path: string, headers: Record<string, string> = {}) => this.request(path, { headers });

  post(path: string, fields: Fields, headers: Record<string, string> = {}): Promise<Page> {
    return this.request(path, { method: "POST", body: formBody(fields), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
  }

  /** Loads `formPath` and posts to `action` with the CSRF token the page carries. */
  async submit(formPath: string, action: string, fields: Fields, headers: Record<string, string> = {}): Promise<Page> {
    const page = await this.get(formPath);
    return this.post(action, { _csrf: csrfOf(page.html), ...fields }, headers);
  }
}

export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no CSRF token in page:\n${html.slice(0, 500)}`);
  return m[1];
}

/** The fields as a urlencoded body, a name repeated once per value. */
export function formBody(fields: Fields): URLSearchParams {
  const body = new URLSearchParams();
  for (const [name, values] of Object.entries(fields)) for (const v of [values].flat()) body.append(name, v);
  return body;
}

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/**
 * The fields a browser would post for the first POST form of a page (inside <main> when there is one), as it
 * stands: inputs, ticked boxes, each select's chosen option, textareas. Enough for the dashboard's own markup
 * (double-quoted attributes, escaped values); not a general HTML parser.
 */
export function formFieldsOf(html: string): Record<string, string[]> {
  const form = html.slice(html.indexOf('<form method="post"', Math.max(0, html.indexOf("<main"))));
  const body = form.slice(0, form.indexOf("</form>"));
  const out: Record<string, string[]> = {};
  const add = (name: string, value: string) => (out[name] ??= []).push(unescape(value));
  for (const [tag] of body.matchAll(/<input\b[^>]*>/g)) {
    const name = /\sname="([^"]*)"/.exec(tag)?.[1];
    const type = /\stype="([^"]*)"/.exec(tag)?.[1] ?? "text";
    if (!name || ((type === "checkbox" || type === "radio") && !/\schecked\b/.test(tag))) continue;
    add(name, /\svalue="([^"]*)"/.exec(tag)?.[1] ?? "");
  }
  for (const [, name, options] of body.matchAll(/<select\b[^>]*\sname="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
    add(name!, /<option value="([^"]*)" selected>/.exec(options!)?.[1] ?? /<option value="([^"]*)"/.exec(options!)?.[1] ?? "");
  }
  // A browser sends a textarea's line breaks as CRLF.
  for (const [, name, text] of body.matchAll(/<textarea\b[^>]*\sname="([^"]*)"[^>]*>([\s\S]*?)<\/textarea>/g)) add(name!, text!.replace(/\r?\n/g, "\r\n"));
  return out;
}

/** What signedInVisitor needs of an in-process control plane (test/helpers/in-process.ts). */
interface SignInPlane {
  account(email: string): Promise<unknown>;
  handle(request: Request): Promise<Response>;
}

/**
 * A visitor signed in to the dashboard of `plane` as `email` (the account made if new, with the password the
 * in-process helpers give every account), landed on the links page.
 */
export async function signedInVisitor(plane: SignInPlane, baseUrl: string, email: string, password: string): Promise<Visitor> {
  await plane.account(email);
  const v = new Visitor(baseUrl, (request) => plane.handle(request));
  const res = await v.submit("/dashboard/signin", "/dashboard/signin", { email, password });
  if (res.status !== 303 || res.headers.get("location") !== "/dashboard/links") {
    throw new Error(`signing in as ${email} answered ${res.status} to ${res.headers.get("location")}, not 303 to /dashboard/links`);
  }
  return v;
}
