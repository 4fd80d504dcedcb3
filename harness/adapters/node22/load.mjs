// Imports an npm package installed in this folder's node_modules (by
// harness/adapters/setup.sh --node22). It lives here so that bare specifiers resolve against
// harness/adapters/node22/node_modules.
export const load = (name) => import(name);
