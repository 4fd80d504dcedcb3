#!/usr/bin/env bash
# Opt-in: installs the pinned LLM frameworks that vercel-ai.mjs and langchain.mjs drive (not part
# of setup.sh's default or of tools/test.sh: CI does not need them).
exec "$(dirname "$0")/setup.sh" --frameworks
