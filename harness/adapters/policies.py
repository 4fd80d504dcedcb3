"""The declared recovery policies of the Python adapters, as data for `adapter/hello` (the Node
adapters' are in policies.mjs).

Each declaration names a preset: {"extends": "python-http-client"} (docs/policy.md, "Presets").
The presets (reference_impl/presets/<name>.json, embedded in faultline) are the one home of every
value and of its citation; the runner resolves `extends` and judges the client against the
result.
"""

# Python's http.client and urllib without a `timeout` argument: one attempt and no timeouts at
# all (the socket blocks for as long as the server keeps it open), no server hint read, no budget.
NO_RECOVERY_POLICY = {"extends": "python-http-client"}
