"""Where and at what cost the engine runs: devices, memory, costs known before the
work, first-call fixes, per-stage timings."""
