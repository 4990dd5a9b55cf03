"""The four LLM roles (Extractor, Synthesizer, Planner, Notifier): their value types, the backend
protocol, the deterministic `rules` backend and the JSON schemas of their outputs."""
