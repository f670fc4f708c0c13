"""Deliberately broken implementations: each breaks one rule, and the conformance check for it must fail."""
