"""A stand-in service that fails at start, as a misconfigured service would."""

import sys

print("configuration error: nothing works", flush=True)
sys.exit(3)
