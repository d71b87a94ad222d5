"""Top-level pytest configuration: the mmacts plugin generates the conformance cases."""

pytest_plugins = ["mmacts.runner.plugin"]
