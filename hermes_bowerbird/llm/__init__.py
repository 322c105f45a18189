"""Language models: the host's own model, Gemini, or none; one rule for which remote errors are transient."""
