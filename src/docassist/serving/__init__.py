"""Serving processes: the aiohttp server of `docassist serve`, the background work every serving
process starts, turn processes, readiness and metrics."""
