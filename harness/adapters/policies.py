"""The declared recovery policies of the Python adapters, as data for `adapter/hello`: the one
home of every Python adapter's declaration (the Node adapters' is policies.mjs).

The format is the reference client's policy format (docs/policy.md), read strictly by the
runner: an omitted key takes the REFERENCE CLIENT's default, so each declaration states every key
that the client's behaviour depends on, with None (JSON null) for a timeout or cap it does not
have.
"""

# Python's http.client and urllib without a `timeout` argument: one attempt and no timeouts at
# all (the socket blocks for as long as the server keeps it open: socket.getdefaulttimeout() is
# None unless a program sets it), no server hint read, no budget. The fields that only matter
# for a retry are stated anyway, so that no reference default is implied.
NO_RECOVERY_POLICY = {
    "mode": "standard",
    # one endpoint: every attempt goes to the base URL given, no breaker ever stops it
    "routing": {"failover": False, "breaker": None},
    "max_attempts": 1,
    "retryable_classes": [],
    "retry_phases": [],
    "statuses": {"retry": [], "never": []},
    "should_retry_header": False,
    "retry_after": {"honor": False},
    "min_attempt_ms": 0,
    "timeouts": {"connect_ms": None, "response_headers_ms": None, "idle_ms": None,
                 "heartbeats_reset_idle": False, "total_ms": None},
    "budget": None,
}
