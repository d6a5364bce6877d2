"""flmodel: the IIIf federated-learning instance of seed 004 (what the system is).

Never imports ``checker``. See ``spec/SPEC.md`` for the traceability table from seed 004's
definitions to the names here.
"""
