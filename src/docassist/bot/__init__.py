"""Adapters: translate platform events to core calls and core results to platform messages."""
