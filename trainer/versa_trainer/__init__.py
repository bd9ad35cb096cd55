"""Versa's trainers: one entry point per adapter, speaking JSON lines on stdout (see common.emit)."""
