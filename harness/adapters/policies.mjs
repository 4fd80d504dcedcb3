// The declared recovery policies of the Node adapters, as data for `adapter/hello` (the Python
// adapters' are in policies.py).
//
// Each declaration names a preset: `{"extends": "openai-node"}` (docs/policy.md, "Presets"). The
// presets (reference_impl/presets/<name>.json, embedded in faultline) are the one home of every
// value and of its citation: each value was read from the library's own shipped source
// (harness/adapters/node/node_modules/<pkg>/src/..., or frameworks/node_modules/ for the
// frameworks), or from the fetch that Node.js 20 bundles (undici 6.x), with the file and line
// in the preset's notes. Line numbers are those of the versions pinned in node/package.json and
// frameworks/package.json; re-check the presets when a pin moves. The runner resolves `extends`
// and judges retries and timeouts against the result, so a wrong value there makes a true
// behaviour look like a violation, or hides a real one.

// Plain `fetch` of Node.js 20 (kit/node/example.mjs): one attempt, undici's own timeouts.
export const PLAIN_FETCH_POLICY = { extends: 'node-fetch' };

// The official SDKs: openai 6.30.1 and @anthropic-ai/sdk 1.14.0 (one endpoint each).
export const OPENAI_NODE_POLICY = { extends: 'openai-node' };
export const ANTHROPIC_NODE_POLICY = { extends: 'anthropic-node' };

// The LLM frameworks (opt-in: harness/adapters/setup.sh --frameworks), one model each.
export const VERCEL_AI_POLICY = { extends: 'vercel-ai' };
export const LANGCHAIN_POLICY = { extends: 'langchain-js' };

// The frameworks as routers over a call's routes (--with-fallbacks). Their presets state two
// routes; the attempts grow with the routes: the SDK's own 3 streamText attempts each try every
// route once (vercel-ai-fallback), and each route's model spends its own 7 attempts
// (langchain-js-fallbacks: route_attempts 7).
//
// ai-fallback's FallbackModel is sticky: it keeps the model a failure moved it to for the calls
// after, and goes back to the first model once modelResetInterval has passed since its last
// reset (ai-fallback dist/index.js checkAndResetModel), so no later than that after any
// failover. The adapter passes this interval (the library's own default, 3 minutes) and declares
// it as routing.sticky.reset_ms (docs/policy.md), which ROUTE-010 judges across the calls of a
// session.
export const AI_FALLBACK_RESET_MS = 3 * 60 * 1000;
export const vercelAiFallbackPolicy = (routes) =>
  ({ extends: 'vercel-ai-fallback', max_attempts: 3 * routes,
     routing: { sticky: { reset_ms: AI_FALLBACK_RESET_MS } } });
export const langchainFallbacksPolicy = (routes) =>
  ({ extends: 'langchain-js-fallbacks', max_attempts: 7 * routes });
