"""The ground floor: what a suite and the generic machinery agree on (issue 25, item 1).

``driver``: the suite contract (``Driver``, ``Expectation``, ``LaunchResult``); ``records``: the result record,
one per finished case, and how runs keep it; ``suites``: suite discovery and the repository root. Everything
else imports these; they import nothing of the project but the case model (``mmacts.cases``, the other half of
the contract, beside this package until its typed form and recipe join it).

Why a floor of its own: before it, the backends imported the report for the record, the comparison imported
the backends for the expectation, and the store, the reports and the mutants imported the runner to find the
suites -- every upper package reached into another, and none could be read alone.
"""
