"""Spec catalog: the PTX ISA tables and rules as data with provenance (see catalog.py)."""
