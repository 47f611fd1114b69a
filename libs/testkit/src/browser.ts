import { CookieJar, type Cookie } from "tough-cookie";

export interface BrowserResponse {
  status: number;
  headers: Headers;
  // Tests read fields of whatever JSON came back.
  body: any;
}

export interface BrowserRequest {
  body?: unknown;
  headers?: Record<string, string>;
  /** Send `x-csrf-token` from the `rt_csrf` cookie (default: on every method but GET). */
  csrf?: boolean;
}

/** A response body parsed as JSON, or its text when it is not JSON (CSV), or null when empty. */
export async function readJsonOrText(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/**
 * A client that keeps cookies as a browser does (tough-cookie's jar: domain, path, expiry,
 * Secure), for the dashboard's session and CSRF rules. Redirects are not followed, so a test
 * reads each `Location`.
 */
export class Browser {
  readonly jar = new CookieJar();
  private readonly now: () => Date;

  /**
   * `now` is the time the browser believes it is, for cookie expiry: a test whose servers run on a
   * manual clock gives the browser the same one, or a cookie the server set to expire a week after
   * its clock's date would be expired already once that date is more than a week ago.
   */
  constructor(
    readonly baseUrl: string,
    opts: { now?: () => Date } = {},
  ) {
    this.now = opts.now ?? (() => new Date());
  }

  /** The value of a cookie the jar would send to `baseUrl`, if any. */
  async cookie(name: string): Promise<string | undefined> {
    const cookies = await this.cookiesFor(this.baseUrl);
    return cookies.find((c) => c.key === name)?.value;
  }

  /** What the jar would send to `url`, expired by this browser's clock (the jar's own check reads the real time). */
  private async cookiesFor(url: string): Promise<Cookie[]> {
    const now = this.now();
    const cookies = await this.jar.getCookies(url, { expire: false });
    return cookies.filter((c) => {
      const expires = c.expiryTime(now);
      return expires === undefined || expires > now.getTime();
    });
  }

  async request(method: string, path: string, opts: BrowserRequest = {}): Promise<BrowserResponse> {
    const url = new URL(path, this.baseUrl).toString();
    const headers: Record<string, string> = { ...opts.headers };
    const cookieHeader = (await this.cookiesFor(url)).map((c) => c.cookieString()).join("; ");
    if (cookieHeader) headers.cookie = cookieHeader;
    if (opts.csrf ?? method !== "GET") {
      const csrf = await this.cookie("rt_csrf");
      if (csrf) headers["x-csrf-token"] = csrf;
    }
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(url, { method, headers, body, redirect: "manual" });
    for (const setCookie of res.headers.getSetCookie()) await this.jar.setCookie(setCookie, url, { now: this.now() });
    return { status: res.status, headers: res.headers, body: await readJsonOrText(res) };
  }

  get(path: string, opts?: BrowserRequest) {
    return this.request("GET", path, opts);
  }

  post(path: string, body?: unknown, opts: BrowserRequest = {}) {
    return this.request("POST", path, { ...opts, body });
  }
}
