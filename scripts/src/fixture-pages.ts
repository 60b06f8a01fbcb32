/**
 * Pages for rendering tests and benchmarks, added to a fixture site (fixture-site.ts). Layouts are
 * fixed (body margin 0, blocks of known size and colour) so a test can sample a screenshot's
 * pixels where it knows what must be.
 *
 *   /page/simple           one screen: a heading and a paragraph
 *   /page/scheme           white background, black under prefers-color-scheme: dark
 *   /page/lazy?n=12        n images 300 px tall, 900 px apart, every other one loading="lazy" and the
 *                          rest loaded by an IntersectionObserver; image i is /lazy-img/<i>.svg, solid
 *                          LAZY_COLOUR, at top 600 + 900 i; its placeholder is white
 *   /page/tall?px=200000   a page px tall (a repeating stripe pattern)
 *   /page/infinite         appends a screen of content whenever the bottom comes into view, forever
 *   /page/never-idle       polls /ok every 50 ms and loads an image that never finishes
 *   /page/device           two 100 px stripes, FEATURE_ON where the page sees a coarse pointer (first)
 *                          and touch points (second), else FEATURE_OFF; then the text
 *                          "layout width <window.innerWidth>"; each request's User-Agent is recorded
 *   /page/hostile          alert, confirm and prompt at load, a beforeunload handler, window.open
 *                          pop-ups, a download started by a script; the page turns POPUP_OPEN if a
 *                          pop-up it opened is still open 1 s after load (POPUP_BLOCKED if none
 *                          opened), and holds a request open 1.2 s so a capture waits for that check
 *   /page/self-closing-popup
 *                          opens /page/closes-itself in a pop-up, which calls window.close() at once, so
 *                          the renderer's own close of that pop-up finds it gone; and more of a page's
 *                          lifecycle at once: a pop-up that opens another and closes itself, one that
 *                          shows an alert and closes itself, an iframe that removes itself while it
 *                          loads, a worker that ends itself, a download
 *   /page/js-redirect?to=<url>
 *                          sends the window to <url> by script 50 ms after load
 *   /page/embeds?internal=<origin>
 *                          image, iframe, fetch, websocket and worker requests to <origin>, an iframe of
 *                          file:///etc/passwd and the backslash form of CVE-2024-21527, and the text
 *                          "page rendered"
 *   /attachment            a download (Content-Disposition: attachment), not a page
 *   /page/box              BOX: a block of known place, size and colour (#box), a banner (#banner)
 *                          across the top, and a late block (#late) added LATE_MS after load
 *   /page/wide?w=6000&h=200
 *                          one block (#wide) w × h CSS px (default 6000 × 200), BOX's colour, at the top left
 *   /page/consent          a consent banner (Jetpack's EU cookie law widget, CONSENT_BANNER colour) fixed
 *                          over the top 100 px, and an image from /ads/banners/ad.gif (an EasyList path)
 *                          with the page's query
 *   /page/long?n=3         n sections one A4 page tall, each with a heading "Section i"; the first
 *                          line of text starts at the top-left of the content box
 */
import type { FixtureSite } from './fixture-site.js';

/** The colour of every lazy image; placeholders and the page are white. */
export const LAZY_COLOUR = '#00c853';
export const LAZY_IMAGE = { top: 600, gap: 900, height: 300, width: 400 };
/** /page/device's stripe colours: the feature is present, or absent. */
export const FEATURE_ON = '#00c853';
export const FEATURE_OFF = '#d50000';
/** /page/hostile's background when a pop-up outlived the check, or none could be opened. */
export const POPUP_OPEN = '#d50000';
export const POPUP_BLOCKED = '#2962ff';

/** /page/box's block, in CSS px, and the late block's delay. */
export const BOX = { left: 40, top: 120, width: 300, height: 150, colour: '#2962ff' };
export const LATE_MS = 1_500;
/** /page/consent's banner colour. */
export const CONSENT_BANNER = '#ff6d00';

export interface RenderPages {
  /** The User-Agent of each /page/device request, by its path and query. */
  userAgents: Map<string, string>;
}

const html = (body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  '<style>html,body{margin:0;padding:0;background:#fff;font:16px sans-serif}</style>' +
  `${head}</head><body>${body}</body></html>`;

export function addRenderPages(site: FixtureSite): RenderPages {
  const userAgents = new Map<string, string>();
  const page = (path: string, render: (url: URL) => string) =>
    site.route(path, (_req, res, url) => {
      const body = render(url);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });

  page('/page/simple', () => html('<h1>Simple page</h1><p>One screen of text.</p>'));

  site.route('/page/device', (req, res, url) => {
    userAgents.set(url.pathname + url.search, req.headers['user-agent'] ?? '');
    const stripe = (id: string) => `<div id="${id}" style="height:100px;background:${FEATURE_OFF}"></div>`;
    const body = html(
      `${stripe('pointer')}${stripe('touch')}<p id="width">layout width unknown</p>`,
      `<script>addEventListener('DOMContentLoaded', () => {
        const on = (id, yes) => { if (yes) document.getElementById(id).style.background = '${FEATURE_ON}'; };
        on('pointer', matchMedia('(pointer: coarse)').matches);
        on('touch', navigator.maxTouchPoints > 0);
        document.getElementById('width').textContent = 'layout width ' + window.innerWidth;
      });</script>`,
    );
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });

  page('/page/scheme', () =>
    html(
      '<div style="height:100vh">colour scheme</div>',
      '<style>@media (prefers-color-scheme: dark){html,body{background:#000;color:#fff}}</style>',
    ),
  );

  page('/page/lazy', (url) => {
    const n = Math.min(100, Number(url.searchParams.get('n') ?? 12));
    const { top, gap, height, width } = LAZY_IMAGE;
    const blocks = Array.from({ length: n }, (_, i) => {
      const style = `position:absolute;left:0;top:${top + gap * i}px;width:${width}px;height:${height}px;display:block`;
      return i % 2 === 0
        ? `<img loading="lazy" src="/lazy-img/${i}.svg" style="${style}" alt="">`
        : `<img data-src="/lazy-img/${i}.svg" class="io" style="${style}" alt="">`;
    });
    const script = `<script>
      const io = new IntersectionObserver((entries) => entries.forEach((e) => {
        if (e.isIntersecting) { e.target.src = e.target.dataset.src; io.unobserve(e.target); }
      }));
      document.querySelectorAll('img.io').forEach((img) => io.observe(img));
    </script>`;
    const pageHeight = top + gap * n + 200;
    return html(`<div style="position:relative;height:${pageHeight}px">${blocks.join('')}</div>${script}`);
  });
  for (let i = 0; i < 100; i++) {
    site.route(`/lazy-img/${i}.svg`, (_req, res) => {
      const svg =
        '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300">' +
        `<rect width="400" height="300" fill="${LAZY_COLOUR}"/></svg>`;
      // A little latency, as a real image server has.
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'image/svg+xml', 'content-length': Buffer.byteLength(svg) });
        res.end(svg);
      }, 30);
    });
  }

  page('/page/tall', (url) => {
    const px = Math.min(1_000_000, Number(url.searchParams.get('px') ?? 200_000));
    return html(
      `<div style="height:${px}px;background:repeating-linear-gradient(#fff 0 100px,#1565c0 100px 200px)"></div>`,
    );
  });

  page('/page/infinite', () =>
    html(
      '<div id="feed"></div><div id="end" style="height:10px"></div>',
      `<script>addEventListener('DOMContentLoaded', () => {
        const feed = document.getElementById('feed'); let n = 0;
        const more = () => { const d = document.createElement('div'); d.style.height = '1000px';
          d.textContent = 'item ' + (n++); feed.appendChild(d); };
        more();
        new IntersectionObserver((e) => { if (e[0].isIntersecting) more(); }).observe(document.getElementById('end'));
      });</script>`,
    ),
  );

  page('/page/never-idle', () =>
    html(
      '<h1>Never idle</h1><img src="/never-ends" width="10" height="10" alt="">',
      "<script>setInterval(() => fetch('/ok?poll=' + Date.now()).catch(() => {}), 50);</script>",
    ),
  );

  page('/page/hostile', () =>
    html(
      '<h1>Hostile page</h1><a id="pop" href="/page/simple" target="_blank">pop</a>',
      `<script>
        fetch('/slow?ms=1200').catch(() => {});
        addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'stay'; });
        addEventListener('load', () => {
          alert('alert'); confirm('confirm?'); prompt('prompt?');
          const popups = [window.open('/page/simple?popup=1'), window.open('/page/simple?popup=2', '_blank', 'popup')];
          document.getElementById('pop').click();
          const a = document.createElement('a'); a.href = '/attachment'; a.download = 'x.bin';
          document.body.appendChild(a); a.click();
          setTimeout(() => {
            const open = popups.some((w) => w && !w.closed);
            const blocked = popups.some((w) => !w);
            if (open || blocked) {
              document.documentElement.style.background = document.body.style.background =
                open ? '${POPUP_OPEN}' : '${POPUP_BLOCKED}';
            }
          }, 1000);
        });
      </script>`,
    ),
  );

  page('/page/self-closing-popup', () =>
    html(
      '<h1>Self-closing pop-up</h1>' +
        `<iframe srcdoc="<script>parent.document.querySelector('iframe').remove()</script>"></iframe>`,
      `<script>
        window.open('/page/closes-itself');
        window.open('/page/closes-itself?then=open');
        window.open('/page/closes-itself?then=alert');
        new Worker(URL.createObjectURL(new Blob(['close()'], { type: 'text/javascript' })));
        const a = document.createElement('a'); a.href = '/attachment'; a.download = 'x.bin';
        document.body.appendChild(a); a.click();
      </script>`,
    ),
  );
  page('/page/closes-itself', (url) => {
    const then = url.searchParams.get('then');
    const before = then === 'open' ? "window.open('/page/closes-itself');" : then === 'alert' ? "alert('bye');" : '';
    return html('<p>Closing</p>', `<script>${before} window.close();</script>`);
  });

  page('/page/js-redirect', (url) =>
    html(
      '<h1>Redirecting</h1>',
      `<script>addEventListener('load', () => setTimeout(() => { ` +
        `location.href = ${JSON.stringify(url.searchParams.get('to') ?? '/')}; }, 50));</script>`,
    ),
  );

  page('/page/embeds', (url) => {
    const origin = url.searchParams.get('internal') ?? 'http://127.0.0.2';
    const host = new URL(origin).host;
    return html(
      `<h1>page rendered</h1>
       <img src="${origin}/secret.png" width="10" height="10" alt="">
       <iframe src="${origin}/secret" width="300" height="60"></iframe>
       <iframe src="file:///etc/passwd" width="300" height="60"></iframe>
       <iframe src="\\\\${host}/secret-backslash" width="300" height="60"></iframe>
       <pre id="out"></pre>`,
      `<script>
        fetch(${JSON.stringify(`${origin}/secret-fetch`)})
          .then((r) => r.text())
          .then((t) => { document.getElementById('out').textContent = t; }, () => {});
        try { new WebSocket(${JSON.stringify(`ws://${host}/secret-ws`)}); } catch {}
        const worker = ${JSON.stringify(`fetch(${JSON.stringify(`${origin}/secret-worker`)}).catch(() => {});`)};
        const w = new Worker(URL.createObjectURL(new Blob([worker], { type: 'text/javascript' })));
      </script>`,
    );
  });

  page('/page/box', () =>
    html(
      `<div id="banner" style="position:fixed;top:0;left:0;right:0;height:80px;background:${FEATURE_OFF}">` +
        'We use cookies</div>' +
        `<div id="box" style="position:absolute;left:${BOX.left}px;top:${BOX.top}px;width:${BOX.width}px;` +
        `height:${BOX.height}px;background:${BOX.colour}"></div>`,
      `<script>addEventListener('load', () => setTimeout(() => {
        const late = document.createElement('div'); late.id = 'late'; late.textContent = 'late';
        late.style.cssText = 'position:absolute;left:0;top:400px;width:100px;height:100px;background:${FEATURE_ON}';
        document.body.appendChild(late);
      }, ${LATE_MS}));</script>`,
    ),
  );

  page('/page/wide', (url) => {
    const size = (name: string, fallback: number) =>
      Math.min(100_000, Number(url.searchParams.get(name) ?? fallback) || fallback);
    return html(
      `<div id="wide" style="width:${size('w', 6_000)}px;height:${size('h', 200)}px;background:${BOX.colour}"></div>`,
    );
  });

  page('/page/consent', (url) =>
    html(
      `<h1>Consent</h1><img src="/ads/banners/ad.gif${url.search}" width="300" height="250" alt="">` +
        '<div class="widget widget_eu_cookie_law_widget" style="position:fixed;top:0;left:0;right:0;height:100px;' +
        `background:${CONSENT_BANNER}"><form id="jetpack-eu-cookie-law-form">We use cookies ` +
        '<input type="submit" class="accept" value="Close and accept"></form></div>',
    ),
  );
  site.route('/ads/banners/ad.gif', (_req, res) => {
    const gif = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
    res.writeHead(200, { 'content-type': 'image/gif', 'content-length': gif.length });
    res.end(gif);
  });

  page('/page/long', (url) => {
    const n = Math.min(50, Number(url.searchParams.get('n') ?? 3));
    const sections = Array.from(
      { length: n },
      (_, i) =>
        `<section style="height:1000px;break-after:page"><h2 style="margin:0">Section ${i + 1}</h2>` +
        '<p>Text of the section.</p></section>',
    );
    return html(sections.join(''), '<title>Long document</title>');
  });

  site.route('/attachment', (_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-disposition': 'attachment; filename="report.bin"',
      'content-length': 4,
    });
    res.end('data');
  });
  return { userAgents };
}
