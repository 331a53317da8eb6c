"""Flow tests: ``*.test.yaml`` files of cases run against a flow (``roost test``, pytest).

``spec`` reads and checks a test file, ``cases`` runs one case and judges it,
``session`` runs every case under some paths, ``report`` prints the outcome
and writes JUnit XML, and ``pytest_plugin`` lets pytest collect the same files.
Nothing is imported here, so that pytest loading the plugin stays cheap.
"""

SUFFIX = ".test.yaml"  # the end of a test file's name
