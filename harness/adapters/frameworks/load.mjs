// Imports an npm package installed in this folder's node_modules (by
// harness/adapters/setup-frameworks.sh). It lives here so that bare specifiers resolve against
// harness/adapters/frameworks/node_modules.
export const load = (name) => import(name);
