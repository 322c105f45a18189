"""The vector tier: embedding backends (one file each), the embedding cache, the index and the service."""
