"""Placeholder: registers no command until its helper writes it."""
