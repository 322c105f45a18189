"""Curation: redaction, noise filtering, entity spotting and heuristic extraction of memories from turns."""
