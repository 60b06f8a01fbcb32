/**
 * Bot walls: a 403/503 (sometimes 429) that is a challenge page for browsers, not a dead link.
 * Reporting them as broken would be a false alarm; they are a warning that names the vendor.
 */

type Headers = Record<string, string | string[] | undefined>;

const WALL_STATUSES = new Set([403, 429, 503]);

interface Vendor {
  name: string;
  matches(headers: Headers, body: string): boolean;
}

const headerText = (headers: Headers, name: string) => {
  const value = headers[name];
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).toLowerCase();
};

const VENDORS: Vendor[] = [
  {
    name: 'Cloudflare',
    matches: (h, body) =>
      headerText(h, 'cf-mitigated') === 'challenge' ||
      (headerText(h, 'server').includes('cloudflare') &&
        /just a moment|cf-chl|challenge-platform|attention required/i.test(body)),
  },
  { name: 'DataDome', matches: (h, body) => headerText(h, 'x-datadome') !== '' || /captcha-delivery\.com/i.test(body) },
  {
    name: 'Sucuri',
    matches: (h, body) => headerText(h, 'x-sucuri-id') !== '' && /sucuri website firewall/i.test(body),
  },
  {
    name: 'Akamai',
    matches: (h, body) => headerText(h, 'server').includes('akamaighost') && /access denied/i.test(body),
  },
  { name: 'PerimeterX', matches: (_h, body) => /_pxcaptcha|px-captcha|perimeterx/i.test(body) },
  { name: 'AWS WAF', matches: (h) => headerText(h, 'x-amzn-waf-action') !== '' },
];

/** The bot-protection vendor whose challenge this response is, or undefined. */
export function botWallVendor(status: number, headers: Headers, bodySample: string): string | undefined {
  if (!WALL_STATUSES.has(status)) return undefined;
  return VENDORS.find((v) => v.matches(headers, bodySample))?.name;
}
