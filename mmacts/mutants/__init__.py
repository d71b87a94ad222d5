"""Planted faults (mutants) that the suites must catch: a verdict is worth something only if it
would have failed had the thing it checks been wrong."""
