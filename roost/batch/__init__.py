"""Batch runs (``roost batch``): a stored run of one flow for each row of an inputs file.

``inputs`` reads the rows, ``plan`` checks them and names each row's run,
``rows`` runs one row (start, resume or leave it), ``local`` runs rows on this
process's event loop and ``ray_tasks`` as tasks on a Ray cluster, ``progress``
draws the bar, ``results`` writes the results file and ``session`` ties one
command together.
"""
