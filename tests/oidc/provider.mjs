// A real OpenID provider for the tests: the certified `oidc-provider` package (npm, pinned in
// infra/lib.sh, installed into .local/npm-oidc), on a free loopback port, with a login page
// of its own instead of real accounts. Used by tests/api/oauth.rs and tests/browser/oidc_test.py.
//
// Input (environment):
//   OIDC_NODE_MODULES  the node_modules folder holding oidc-provider
//   OIDC_CLIENTS       JSON array of {client_id, client_secret, redirect_uris,
//                      token_endpoint_auth_method?}
// Output: one JSON line on stdout once listening: {"issuer": "http://127.0.0.1:PORT"}.
//
// The login page (GET /interaction/:uid) is a form with the subject, e-mail, "e-mail verified"
// and name; posting it (POST /interaction/:uid/login) signs that subject in and grants the
// requested scopes at once (no separate consent page). The claims go into the ID token.
//
// Test behaviours by client id:
//   a client id ending in "-short"     authorization codes live 2 seconds (expired-code tests)
//   a client id ending in "-wrongaud"  the ID token's `aud` is replaced by another client's,
//                                      re-signed with the provider's own key (wrong audience)
// GET /test/rotate replaces the signing key with a new one (new kid): a key rotation.
import http from 'node:http';
import crypto from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.OIDC_NODE_MODULES;
if (!modules) {
  console.error('OIDC_NODE_MODULES is not set');
  process.exit(2);
}
const { default: Provider } = await import(
  pathToFileURL(path.join(modules, 'oidc-provider', 'lib', 'index.js')).href
);
const clients = JSON.parse(process.env.OIDC_CLIENTS || '[]').map((c) => ({
  client_id: c.client_id,
  client_secret: c.client_secret,
  redirect_uris: c.redirect_uris,
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: c.token_endpoint_auth_method || 'client_secret_basic',
}));

function newKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: crypto.randomUUID(), alg: 'RS256', use: 'sig' };
}
let signing = newKey();

// Claims of the subjects signed in through the login form.
const accounts = new Map();

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

let provider;
function build() {
  const p = new Provider(issuer, {
    clients,
    jwks: { keys: [signing] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The requested claims go into the ID token (the service reads no userinfo).
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    cookies: { keys: ['test-cookie-key-not-secret'] },
    ttl: {
      AuthorizationCode: (ctx, code, client) =>
        client.clientId.endsWith('-short') ? 2 : 60,
    },
    async findAccount(ctx, sub) {
      const claims = accounts.get(sub);
      if (!claims) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...claims }) };
    },
  });
  p.use(interactions);
  p.use(wrongAudience);
  handler = p.callback();
  return p;
}
let handler;

const b64url = (buf) => Buffer.from(buf).toString('base64url');

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const escape = (s) =>
  String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function interactions(ctx, next) {
  const m = ctx.path.match(/^\/interaction\/([^/]+)(\/login)?$/);
  if (!m) {
    if (ctx.path === '/test/rotate') {
      signing = newKey();
      provider = build();
      ctx.body = { kid: signing.kid };
      return;
    }
    return next();
  }
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (!m[2]) {
    ctx.type = 'html';
    ctx.body = `<!doctype html><html><head><title>Test provider login</title></head><body>
<h1>Sign in at the test provider</h1>
<p>Client: ${escape(details.params.client_id)}</p>
<form method="post" action="/interaction/${escape(details.uid)}/login">
<label>Subject <input name="sub" id="sub" required></label>
<label>E-mail <input name="email" id="email"></label>
<label>E-mail verified <input type="checkbox" name="email_verified" id="email_verified" value="true"></label>
<label>Name <input name="name" id="name"></label>
<button type="submit" id="signin">Sign in</button>
</form></body></html>`;
    return;
  }
  if (ctx.method !== 'POST') {
    ctx.status = 405;
    return;
  }
  const form = await readForm(ctx.req);
  const sub = form.get('sub');
  const claims = {};
  if (form.get('email')) claims.email = form.get('email');
  claims.email_verified = form.get('email_verified') === 'true';
  if (form.get('name')) claims.name = form.get('name');
  accounts.set(sub, claims);
  const grant = new provider.Grant({ accountId: sub, clientId: details.params.client_id });
  grant.addOIDCScope(details.params.scope);
  const grantId = await grant.save();
  const resume = await provider.interactionResult(
    ctx.req,
    ctx.res,
    { login: { accountId: sub }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
  ctx.status = 303;
  ctx.redirect(resume);
}

async function wrongAudience(ctx, next) {
  await next();
  if (ctx.path !== '/token' || !ctx.body || !ctx.body.id_token) return;
  const client = ctx.oidc && ctx.oidc.client;
  if (!client || !client.clientId.endsWith('-wrongaud')) return;
  const [header, payload] = ctx.body.id_token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  claims.aud = 'another-client';
  const input = `${header}.${b64url(JSON.stringify(claims))}`;
  const key = crypto.createPrivateKey({ key: signing, format: 'jwk' });
  const signature = crypto.sign('sha256', Buffer.from(input), key);
  ctx.body = { ...ctx.body, id_token: `${input}.${b64url(signature)}` };
}

provider = build();
server.on('request', (req, res) => handler(req, res));
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The test that started this process may die without a signal: end with its stdin.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
