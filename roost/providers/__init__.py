"""roost.providers: model backends behind one small interface.

``base.Provider`` is what the engine sees; ``registry.build_provider`` makes
one from a flow's provider entry. Each backend is one module with a
``create(name, config, context)`` factory (``base.ProviderFactory``, given a
``base.ProviderContext``): ``scripted`` (offline),
``openai_chat`` (Chat Completions and compatible servers), ``openai_responses``
(the Responses API, stateless) and ``anthropic`` (Messages); ``fallback``
chains them. The modules starting with ``_`` hold what the SDK backends share:
settings, error translation, retries and attempts, tool-call joining and the
ordering of tool results.
"""
