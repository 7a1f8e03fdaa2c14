"""Utilities for modules and parameters."""
