"""flmodel: the IIIf federated-learning instance of [IIIf-FL] (what the system is).

Never imports ``checker``. See ``spec/SPEC.md`` for the traceability table from [IIIf-FL]'s
definitions to the names here.
"""
