"""Labelled position sets built from games, and the small shipped samples."""
