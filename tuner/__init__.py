"""Texel tuning of the Wasp evaluation parameters."""
