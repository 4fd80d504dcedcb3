// Imports an npm package installed in this folder's node_modules (by harness/adapters/setup.sh).
// It lives here so that bare specifiers resolve against harness/adapters/node/node_modules.
export const load = (name) => import(name);
