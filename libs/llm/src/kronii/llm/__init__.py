"""The model backends any service can use: `protocol` (reply and call record types, errors, the guard that
only redacted input goes out, JSON protocol R2), `openai` (any OpenAI-compatible server, streamed) and
`llamacpp` (a GGUF model in process, optional extra). Nothing is imported here, so importing
kronii.llm stays cheap: a caller imports the submodule it needs."""
