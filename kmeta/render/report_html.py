"""Placeholder until the HTML renderer lands (branch h-html)."""
