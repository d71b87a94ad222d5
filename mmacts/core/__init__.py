"""The ground floor: what a suite and the generic machinery agree on (issue 25, item 1).

``driver``: the suite contract (the ``Driver`` base class with every optional hook and its default,
``Expectation``, ``LaunchResult``); ``recipe``: the data recipe as a value (kind and name, parsed once);
``records``: the result record, one per finished case, and how runs keep it; ``suites``: suite discovery and the
repository root. Everything else imports these; they import nothing of the project (the case model,
``mmacts.cases``, the other half of the contract, imports ``recipe``; ``driver`` names it for annotations only).

Why a floor of its own: before it, the backends imported the report for the record, the comparison imported
the backends for the expectation, and the store, the reports and the mutants imported the runner to find the
suites -- every upper package reached into another, and none could be read alone.
"""
